// A TypeScript-SDK program (plain JavaScript, run with node): query() with canUseTool and a PreToolUse hook, against
// the CLI at argv[2]. The model (a scripted server) calls Bash twice; the hook sees both calls, canUseTool allows the
// first with a changed command and denies the second. Prints what it observed as one JSON line.
import { query } from "@anthropic-ai/claude-agent-sdk";

const [cli, cwd] = process.argv.slice(2);
const seen = { asked: [], hooked: [], kinds: [], result: null, isError: null };
const options = {
  pathToClaudeCodeExecutable: cli,
  cwd,
  env: process.env,
  canUseTool: async (toolName, input) => {
    seen.asked.push([toolName, input.command]);
    if (seen.asked.length === 1) return { behavior: "allow", updatedInput: { ...input, command: "touch changed.txt" } };
    return { behavior: "deny", message: "TS-DENIED" };
  },
  hooks: {
    PreToolUse: [{ matcher: "Bash", hooks: [async (input) => { seen.hooked.push(input.tool_input.command); return {}; }] }],
  },
};
async function* prompts() {
  yield { type: "user", message: { role: "user", content: "go" }, parent_tool_use_id: null, session_id: "" };
}
for await (const message of query({ prompt: prompts(), options })) {
  const kind = message.type === "system" ? `system/${message.subtype}` : message.type;
  if (kind !== "system/init" && message.type === "system") continue;
  if (seen.kinds.at(-1) !== kind) seen.kinds.push(kind);
  if (message.type === "result") { seen.result = message.result ?? null; seen.isError = message.is_error; }
}
console.log(JSON.stringify(seen));
