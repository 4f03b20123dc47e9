import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { type ChatMessage, ChatTemplate, HfTokenizer } from '../../src/tokenizer';
import { fixtureJson } from '../support/hf-fixtures';

const conversation: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'What is a KV cache?' },
  { role: 'assistant', content: ' Keys and values. ' },
];

describe('ChatTemplate on the fixtures', () => {
  it('renders Qwen2’s ChatML, with its default system message when none is given', () => {
    const chat = ChatTemplate.fromTokenizerConfig(
      fixtureJson('tiny-qwen2', 'tokenizer_config.json'),
    );
    expect(chat.render(conversation)).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n' +
        '<|im_start|>user\nWhat is a KV cache?<|im_end|>\n' +
        '<|im_start|>assistant\n Keys and values. <|im_end|>\n',
    );
    expect(chat.render(conversation.slice(1, 2), { addGenerationPrompt: true })).toBe(
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' +
        '<|im_start|>user\nWhat is a KV cache?<|im_end|>\n' +
        '<|im_start|>assistant\n',
    );
  });

  it('renders Llama 3’s headers with its BOS and trimmed contents', () => {
    const chat = ChatTemplate.fromTokenizerConfig(
      fixtureJson('tiny-llama', 'tokenizer_config.json'),
    );
    const turns =
      '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nWhat is a KV cache?<|eot_id|>' +
      '<|start_header_id|>assistant<|end_header_id|>\n\nKeys and values.<|eot_id|>';
    expect(chat.render(conversation.slice(1))).toBe(turns);
    expect(chat.render(conversation.slice(1), { addGenerationPrompt: true })).toBe(
      `${turns}<|start_header_id|>assistant<|end_header_id|>\n\n`,
    );
    expect(chat.render([])).toBe('');
  });

  it('gives text whose special tokens encode as their ids (BOS once, from the template)', () => {
    const config = fixtureJson('tiny-llama', 'tokenizer_config.json');
    const tokenizer = new HfTokenizer(fixtureJson('tiny-llama', 'tokenizer.json'), config);
    const prompt = ChatTemplate.fromTokenizerConfig(config).render(conversation.slice(1, 2), {
      addGenerationPrompt: true,
    });
    const ids = Array.from(tokenizer.encode(prompt));
    const special = (token: string) => tokenizer.specialTokens.get(token)!;
    expect(ids[0]).toBe(tokenizer.bosId);
    expect(ids.filter((id) => id === tokenizer.bosId)).toHaveLength(1);
    expect(ids.filter((id) => id === special('<|start_header_id|>'))).toHaveLength(2);
    expect(ids.filter((id) => id === special('<|eot_id|>'))).toHaveLength(1);
    expect(tokenizer.decode(ids)).toBe(prompt);
  });
});

describe('ChatTemplate sources and variables', () => {
  it('passes the special tokens of the config, additional ones included', () => {
    const chat = ChatTemplate.fromTokenizerConfig({
      chat_template:
        '{{ bos_token }}|{{ eos_token }}|{{ pad_token }}|{{ unk_token is defined }}|{{ additional_special_tokens | join(",") }}',
      bos_token: { content: '<s>', special: true },
      eos_token: '</s>',
      pad_token: '<pad>',
      unk_token: null,
      additional_special_tokens: ['<a>', { content: '<b>' }],
    });
    expect(chat.render([])).toBe('<s>|</s>|<pad>|false|<a>,<b>');
  });

  it('takes a template given on its own (chat_template.jinja) over the config’s', () => {
    const chat = ChatTemplate.fromTokenizerConfig(
      { chat_template: 'config', eos_token: '</s>' },
      { template: '{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}' },
    );
    expect(chat.source).toBe('chat_template.jinja');
    expect(chat.render([{ role: 'user', content: 'x' }])).toBe('x</s>');
  });

  it('takes the template named "default" from a list of named templates', () => {
    const chat = ChatTemplate.fromTokenizerConfig({
      chat_template: [
        { name: 'tool_use', template: 'tools' },
        { name: 'default', template: 'default: {{ messages | length }}' },
      ],
    });
    expect(chat.render(conversation)).toBe('default: 3');
  });
});

describe('ChatTemplate errors', () => {
  it('a config without a template (E_CHECKPOINT naming the config)', () => {
    const error = expectLetheError(
      () => ChatTemplate.fromTokenizerConfig({ eos_token: '</s>' }, { configSource: 'd/tc.json' }),
      'E_CHECKPOINT',
      'd/tc.json',
    );
    expect(error.message).toMatch(/has no chat_template/);
    expectLetheError(
      () => ChatTemplate.fromTokenizerConfig({ chat_template: [{ name: 'tools', template: 'x' }] }),
      'E_FORMAT',
      'tokenizer_config.json',
    );
    expectLetheError(
      () => ChatTemplate.fromTokenizerConfig([]),
      'E_FORMAT',
      'tokenizer_config.json',
    );
    expectLetheError(
      () => ChatTemplate.fromTokenizerConfig({ chat_template: 'x', eos_token: 3 }),
      'E_FORMAT',
      'tokenizer_config.json',
    );
  });

  it('a template that does not parse (E_FORMAT naming its file)', () => {
    const error = expectLetheError(
      () => new ChatTemplate('{% for m in messages %}', { source: 'd/chat_template.jinja' }),
      'E_FORMAT',
      'd/chat_template.jinja',
    );
    expect(error.message).toMatch(/the chat template does not parse/);
  });

  it('a template that throws while rendering (E_ARG naming its file, with its message)', () => {
    const strict = new ChatTemplate(
      "{% for m in messages %}{% if (m.role == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant') }}{% endif %}{{ m.content }}{% endfor %}",
      { source: 'd/tokenizer_config.json' },
    );
    expect(strict.render(conversation.slice(1))).toBe('What is a KV cache? Keys and values. ');
    const refused = expectLetheError(
      () => strict.render(conversation),
      'E_ARG',
      'd/tokenizer_config.json',
    );
    expect(refused.message).toContain('Conversation roles must alternate user/assistant');
    const broken = new ChatTemplate('{{ messages[0].content.nope() }}');
    const error = expectLetheError(
      () => broken.render(conversation),
      'E_ARG',
      'tokenizer_config.json',
    );
    expect(error.message).toMatch(/the chat template cannot render these messages/);
  });

  it('messages that are not {role, content} strings (E_ARG naming the message)', () => {
    const chat = new ChatTemplate('{{ messages | length }}');
    expectLetheError(() => chat.render('hi' as never), 'E_ARG', 'messages');
    expectLetheError(() => chat.render([null as never]), 'E_ARG', 'messages[0]');
    expectLetheError(
      () => chat.render([conversation[0]!, { role: 3, content: 'x' } as never]),
      'E_ARG',
      'messages[1].role',
    );
    expectLetheError(
      () => chat.render([{ role: 'user' } as never]),
      'E_ARG',
      'messages[0].content',
    );
    expectLetheError(() => new ChatTemplate(3 as never), 'E_ARG', 'template');
  });
});
