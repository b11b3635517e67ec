/**
 * The MCP face of a hub: {@code synapse-hub mcp} is a stdio Model Context Protocol server that
 * is one agent on a hub ({@link dev.synapsehub.mcp.HubLink}) and offers the coordination verbs
 * as tools and the hub's snapshots as resources ({@link dev.synapsehub.mcp.McpFace}).
 */
package dev.synapsehub.mcp;
