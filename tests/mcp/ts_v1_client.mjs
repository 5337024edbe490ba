// The TypeScript SDK's v1 client (@modelcontextprotocol/sdk, 2025-11-25) in
// front of a stdio server: node ts_v1_client.mjs CALLS_JSON COMMAND ARGS...
// Lists the tools, makes each call of CALLS_JSON ([[name, arguments], ...]) and
// prints one JSON line: {"tools": [...], "calls": [{"result": ...} | {"threw": ...}]}.
// The SDK is found under MCP_NODE_DIR (scripts/test installs it there).
import { pathToFileURL } from 'node:url';

const sdk = `${process.env.MCP_NODE_DIR}/node_modules/@modelcontextprotocol/sdk/dist/esm/client`;
const { Client } = await import(pathToFileURL(`${sdk}/index.js`));
const { StdioClientTransport } = await import(pathToFileURL(`${sdk}/stdio.js`));

const [callsJson, command, ...args] = process.argv.slice(2);
const client = new Client({ name: 'ts-v1-test-client', version: '0.0.0' }, { capabilities: {} });
await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore', env: process.env }));
const { tools } = await client.listTools();
const calls = [];
for (const [name, toolArguments] of JSON.parse(callsJson)) {
  try {
    calls.push({ result: await client.callTool({ name, arguments: toolArguments }) });
  } catch (error) {
    // What pitfall 1 would give: the SDK throws on a deny it cannot validate.
    calls.push({ threw: `${error.constructor.name}: ${error.message}` });
  }
}
console.log(JSON.stringify({ tools: tools.map((tool) => tool.name), calls }));
await client.close();
