/** JMH benchmarks for the hub; see docs/benchmarks.md for commands and results. */
package dev.synapsehub.bench;
