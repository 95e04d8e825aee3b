/**
 * Qwen2.5's chat template written out in code: how chat messages become one prompt string,
 * and the end-of-turn token that is also the chat model's EOS.
 */

/** `<|im_end|>`: the EOS token of Qwen2.5-Instruct chat (counted in usage, never shown as text). */
export const EOS_TOKEN_ID = 151645;

/** The system prompt Qwen2.5's template inserts when the first message is not a system message. */
export const QWEN_DEFAULT_SYSTEM = 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.';

/** A chat message as requests carry it: content is a string or OpenAI content parts. */
export interface ChatMessageIn {
  role: string;
  content?: string | Array<{ type?: string; text?: string }> | null;
}

/** Text of a message's content: a string, or its text parts joined by newlines (as vLLM does). */
export function contentText(content: ChatMessageIn['content']): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content
    .filter((p) => p && typeof p.text === 'string')
    .map((p) => p.text)
    .join('\n');
}

/**
 * Qwen2.5's chat template: the first message's system prompt or the default one, then every
 * other message as `<|im_start|>{role}\n{content}<|im_end|>\n`, then (default) the open
 * assistant turn `<|im_start|>assistant\n`.
 */
export function renderChat(messages: ChatMessageIn[], opts: { addGenerationPrompt?: boolean } = {}): string {
  let out = '';
  let rest = messages;
  if (messages[0]?.role === 'system') {
    out += `<|im_start|>system\n${contentText(messages[0].content)}<|im_end|>\n`;
    rest = messages.slice(1);
  } else {
    out += `<|im_start|>system\n${QWEN_DEFAULT_SYSTEM}<|im_end|>\n`;
  }
  for (const m of rest) out += `<|im_start|>${m.role}\n${contentText(m.content)}<|im_end|>\n`;
  if (opts.addGenerationPrompt ?? true) out += '<|im_start|>assistant\n';
  return out;
}
