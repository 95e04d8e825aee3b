/**
 * Chat-only request checks, as vLLM makes them: the shape of `messages` (pydantic's
 * `ChatCompletionMessageParam` union, `vllm/entrypoints/chat_utils.py`), the empty
 * conversation that Qwen2.5's chat template cannot render, and `tools` / `tool_choice`
 * (`check_tool_usage` in `vllm/entrypoints/openai/chat_completion/protocol.py`, and the
 * `--enable-auto-tool-choice` refusal in `chat_completion/serving.py`). Throws `ApiError`.
 */
import { ApiError } from './reply';
import { describe, validationError } from './request-fields';
import type { ChatMessageIn } from './tokens';

function badMessage(msg: string): ApiError {
  return validationError('messages', msg, 'messages');
}

/**
 * Checks `messages` and returns them typed. Each message is an object with a string `role`;
 * `content` is a string, null/absent, or a list of content parts (objects; a `text` part
 * carries a string `text`). Anything else is a 400 (vLLM: pydantic union validation).
 * With `renderable` (the chat routes), an empty list is the 400 vLLM answers when Qwen2.5's
 * template reads `messages[0]['role']` (a jinja2 `UndefinedError`, turned into a 400 by the
 * serving layer's template-error handler); `/tokenize` uses the same template, so it too.
 * Deviation: image/audio parts are accepted and dropped, where a text-only vLLM model refuses them.
 */
export function checkMessages(v: unknown, renderable = true): ChatMessageIn[] {
  if (!Array.isArray(v))
    throw validationError(
      'messages',
      v === undefined ? 'Field required' : `Input should be a valid list, got ${describe(v)}`,
      'messages',
      v === undefined ? 'missing' : 'list_type',
    );
  for (const m of v) {
    if (!m || typeof m !== 'object' || Array.isArray(m))
      throw badMessage(`each message should be an object with a string "role", got ${describe(m)}`);
    const { role, content } = m as Record<string, unknown>;
    if (typeof role !== 'string') throw badMessage('each message needs a string "role"');
    if (content === undefined || content === null || typeof content === 'string') continue;
    if (!Array.isArray(content))
      throw badMessage(`"content" should be a string or a list of content parts, got ${describe(content)}`);
    for (const part of content) {
      if (!part || typeof part !== 'object' || Array.isArray(part))
        throw badMessage(`each content part should be an object, got ${describe(part)}`);
      const p = part as Record<string, unknown>;
      if ((p.type === 'text' || p.type === undefined) && typeof p.text !== 'string')
        throw badMessage(`a text content part needs a string "text", got ${describe(p.text)}`);
    }
  }
  if (renderable && v.length === 0) throw new ApiError(400, "'list object' has no element 0");
  return v as ChatMessageIn[];
}

const CORRECT_USAGE = 'Correct usage: `{"type": "function", "function": {"name": "my_function"}}`';

function toolNames(tools: unknown): string[] {
  if (!Array.isArray(tools))
    throw validationError('tools', `Input should be a valid list, got ${describe(tools)}`, 'tools', 'list_type');
  return tools.map((t) => {
    const fn = t && typeof t === 'object' ? (t as { function?: unknown }).function : undefined;
    const name = fn && typeof fn === 'object' ? (fn as { name?: unknown }).name : undefined;
    if (typeof name !== 'string')
      throw validationError('tools', 'each tool should be {"type": "function", "function": {"name": <string>, ...}}', 'tools');
    return name;
  });
}

/**
 * `tools` / `tool_choice` as vLLM checks them. Accepted: no tools and no tool_choice, or
 * `tool_choice: "none"` (the model answers in text). `tools` without `tool_choice` means
 * "auto", which a server started without `--enable-auto-tool-choice` (the simulator has no
 * tool parser) refuses with 400. Deviation: `"required"` and a named tool are valid in vLLM
 * (it forces a tool call with structured outputs); the simulator refuses them with a 400 that
 * says so, rather than answering with text. Deviation: with "none" the tool definitions are
 * not rendered into the prompt (vLLM renders them unless `--exclude-tools-when-tool-choice-none`).
 */
export function checkTools(body: Record<string, unknown>): void {
  const { tools } = body;
  if (Array.isArray(tools) && tools.length === 0) {
    throw new ApiError(
      400,
      '`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.',
      'BadRequestError',
      'tools',
    );
  }
  const hasTools = tools !== undefined && tools !== null;
  const choice = 'tool_choice' in body ? body.tool_choice : hasTools && tools ? 'auto' : undefined;
  const names = hasTools ? toolNames(tools) : [];
  if (choice === undefined || choice === null || choice === 'none') return;
  if (!hasTools) throw new ApiError(400, 'When using `tool_choice`, `tools` must be set.', 'BadRequestError', 'tool_choice');
  if (choice !== 'auto' && choice !== 'required' && (typeof choice !== 'object' || Array.isArray(choice))) {
    throw new ApiError(
      400,
      `Invalid value for \`tool_choice\`: ${describe(choice)}! Only named tools, "none", "auto" or "required" are supported.`,
      'BadRequestError',
      'tool_choice',
    );
  }
  if (typeof choice === 'object') {
    const fn = (choice as { function?: unknown }).function;
    if (!fn || typeof fn !== 'object')
      throw new ApiError(
        400,
        `Invalid value for \`function\`: \`${describe(fn)}\` in \`tool_choice\`! ${CORRECT_USAGE}`,
        'BadRequestError',
        'tool_choice.function',
      );
    const name = (fn as { name?: unknown }).name;
    if (typeof name !== 'string' || name === '')
      throw new ApiError(
        400,
        `Invalid \`name\` in \`function\`: \`${describe(name)}\` in \`tool_choice\`! ${CORRECT_USAGE}`,
        'BadRequestError',
        'tool_choice.function.name',
      );
    if (!names.includes(name))
      throw new ApiError(
        400,
        'The tool specified in `tool_choice` does not match any of the specified `tools`',
        'BadRequestError',
        'tool_choice',
      );
  }
  if (choice === 'auto')
    throw new ApiError(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set');
  throw new ApiError(
    400,
    `the simulator does not simulate forced tool calls (tool_choice ${describe(choice)}); send tool_choice "none" or no tools`,
    'BadRequestError',
    'tool_choice',
  );
}
