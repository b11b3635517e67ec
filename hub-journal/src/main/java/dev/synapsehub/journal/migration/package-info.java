/**
 * Migration from another v2 hub: {@link dev.synapsehub.journal.migration.ReferenceImport} reads a
 * database in the layout of the wire contract §12 and writes it as this hub's journal.
 */
package dev.synapsehub.journal.migration;
