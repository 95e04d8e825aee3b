import { describe, expect, it } from 'vitest';
import { resolveApiKey, serverRoot } from '../src/client/url';

describe('serverRoot', () => {
  it.each([
    ['http://h:8000', 'http://h:8000'],
    ['http://h:8000/', 'http://h:8000'],
    ['http://h:8000/v1', 'http://h:8000'],
    ['http://h:8000/v1/', 'http://h:8000'],
    ['http://h:8000//v1//', 'http://h:8000'],
    ['http://h:8000/proxy/v1', 'http://h:8000/proxy'],
    ['http://h:8000/proxy', 'http://h:8000/proxy'],
    ['http://h:8000/v10', 'http://h:8000/v10'],
  ])('%s → %s', (input, root) => {
    expect(serverRoot(input)).toBe(root);
  });
});

describe('resolveApiKey', () => {
  it('prefers the given key, then LOADLAB_API_KEY, then OPENAI_API_KEY', () => {
    const env = { LOADLAB_API_KEY: 'L', OPENAI_API_KEY: 'O' };
    expect(resolveApiKey('K', env)).toBe('K');
    expect(resolveApiKey(undefined, env)).toBe('L');
    expect(resolveApiKey(undefined, { OPENAI_API_KEY: 'O' })).toBe('O');
    expect(resolveApiKey(undefined, {})).toBeUndefined();
  });
  it('treats empty strings as unset; an empty given key sends none', () => {
    expect(resolveApiKey(undefined, { LOADLAB_API_KEY: '', OPENAI_API_KEY: 'O' })).toBe('O');
    expect(resolveApiKey('', { LOADLAB_API_KEY: 'L' })).toBeUndefined();
  });
});
