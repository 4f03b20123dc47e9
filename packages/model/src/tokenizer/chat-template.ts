import { Template } from '@huggingface/jinja';
import { LetheError } from '@lethe/core';
import { checkObject, kindOf } from '../option-checks';
import { specialTokensMap, TOKENIZER_CONFIG_FILE } from './special-tokens';

/** File name of a chat template stored on its own (newer transformers), beside the tokenizer. */
export const CHAT_TEMPLATE_FILE = 'chat_template.jinja';

/** One message of a conversation. */
export interface ChatMessage {
  /** `system`, `user`, `assistant`, … (whatever the template knows). */
  readonly role: string;
  readonly content: string;
}

/** Options of {@link ChatTemplate.render}. */
export interface RenderChatOptions {
  /**
   * End with the header of an assistant turn, for the model to write it (transformers'
   * `add_generation_prompt`; default `false`).
   */
  readonly addGenerationPrompt?: boolean;
}

/** Options of the {@link ChatTemplate} constructor. */
export interface ChatTemplateOptions {
  /**
   * Further template variables, e.g. the special tokens (`bos_token`, `eos_token`, …) that
   * {@link ChatTemplate.fromTokenizerConfig} passes.
   */
  readonly variables?: Readonly<Record<string, unknown>>;
  /** How errors name the template's file (default `tokenizer_config.json`), e.g. its path. */
  readonly source?: string;
}

/** Options of {@link ChatTemplate.fromTokenizerConfig}. */
export interface ChatTemplateFromConfigOptions {
  /**
   * The template's text when it is stored on its own (`chat_template.jinja`); it takes
   * precedence over the config's `chat_template`, as in transformers.
   */
  readonly template?: string;
  /**
   * How errors name the template's file (default `chat_template.jinja` when `template` is
   * given, else `tokenizer_config.json`), e.g. its path.
   */
  readonly source?: string;
  /** How errors name `tokenizer_config.json` (default that name), e.g. its path. */
  readonly configSource?: string;
}

/**
 * A Hugging Face chat template (Jinja, as `tokenizer_config.json`'s `chat_template` holds it):
 * it turns a conversation into the prompt text the model was trained on — ChatML for Qwen2,
 * the header format of Llama 3, … Rendered with `@huggingface/jinja`, Hugging Face's
 * JavaScript implementation of the Jinja subset chat templates use (Node and browsers), with
 * transformers' settings (`trim_blocks`, `lstrip_blocks`) and its variables: `messages`,
 * `add_generation_prompt`, the special tokens, and the engine's `raise_exception`, `range`,
 * `strftime_now`.
 *
 * The rendered text contains the special tokens as text (and BOS when the template writes
 * `bos_token`): encode it without `addBos`.
 *
 * @example
 * ```ts
 * const chat = ChatTemplate.fromTokenizerConfig(JSON.parse(tokenizerConfigText));
 * const prompt = chat.render([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true });
 * const ids = tokenizer.encode(prompt);
 * ```
 */
export class ChatTemplate {
  /** The template's text. */
  readonly template: string;
  /** How errors name the template's file. */
  readonly source: string;
  private readonly compiled: Template;
  private readonly variables: Readonly<Record<string, unknown>>;

  /**
   * @throws LetheError `E_ARG` naming `template` when it is not a string, `options` /
   *   `options.variables` when they are not objects; `E_FORMAT` naming the source when the
   *   template does not parse.
   */
  constructor(template: string, options: ChatTemplateOptions = {}) {
    checkObject(options, 'options');
    if (typeof template !== 'string') {
      throw new LetheError('E_ARG', `must be a string, got ${kindOf(template)}`, 'template');
    }
    const variables = options.variables ?? {};
    checkObject(variables, 'options.variables');
    this.template = template;
    this.source = options.source ?? TOKENIZER_CONFIG_FILE;
    this.variables = variables;
    try {
      this.compiled = new Template(template);
    } catch (error) {
      throw new LetheError(
        'E_FORMAT',
        `the chat template does not parse: ${(error as Error).message}`,
        this.source,
      );
    }
  }

  /**
   * The chat template of a parsed `tokenizer_config.json` (its `chat_template`: a string, or
   * a list of `{name, template}` of which the one named `default` is taken), or `options.template`
   * when the template is stored on its own, with the config's special tokens as variables
   * (`bos_token`, `eos_token`, `unk_token`, `pad_token`, … and `additional_special_tokens`).
   *
   * @throws LetheError `E_CHECKPOINT` naming the config when it has no chat template (and none
   *   is given); `E_FORMAT` naming the config when it is not an object, its `chat_template` is
   *   neither a string nor a list of named templates with a `default`, or a special token is not
   *   a string; the constructor's errors.
   */
  static fromTokenizerConfig(
    config: unknown,
    options: ChatTemplateFromConfigOptions = {},
  ): ChatTemplate {
    checkObject(options, 'options');
    const configSource = options.configSource ?? TOKENIZER_CONFIG_FILE;
    if (typeof config !== 'object' || config === null || Array.isArray(config)) {
      throw new LetheError(
        'E_FORMAT',
        `must be a JSON object, got ${kindOf(config)}`,
        configSource,
      );
    }
    const fields = config as Record<string, unknown>;
    const variables = specialTokensMap(fields, configSource);
    if (options.template !== undefined) {
      return new ChatTemplate(options.template, {
        variables,
        source: options.source ?? CHAT_TEMPLATE_FILE,
      });
    }
    const source = options.source ?? configSource;
    return new ChatTemplate(configTemplate(fields.chat_template, configSource), {
      variables,
      source,
    });
  }

  /**
   * The prompt text of a conversation.
   *
   * @throws LetheError `E_ARG` naming `messages` / `messages[i].role` / `messages[i].content`
   *   unless it is an array of messages with string roles and contents; `E_ARG` naming the
   *   template's source when rendering throws — the template refuses the messages (its
   *   `raise_exception`, e.g. roles that do not alternate) or fails on them (the engine's
   *   message says which; `@huggingface/jinja` does not tell the two apart).
   */
  render(messages: readonly ChatMessage[], options: RenderChatOptions = {}): string {
    checkObject(options, 'options');
    if (!Array.isArray(messages)) {
      throw new LetheError(
        'E_ARG',
        `must be an array of messages, got ${kindOf(messages)}`,
        'messages',
      );
    }
    const copies = messages.map((message, i) => {
      checkObject(message, `messages[${i}]`, 'a message {role, content}');
      for (const field of ['role', 'content'] as const) {
        if (typeof message[field] !== 'string') {
          throw new LetheError(
            'E_ARG',
            `must be a string, got ${kindOf(message[field])}`,
            `messages[${i}].${field}`,
          );
        }
      }
      return { ...message };
    });
    try {
      return this.compiled.render({
        ...this.variables,
        messages: copies,
        add_generation_prompt: options.addGenerationPrompt ?? false,
      });
    } catch (error) {
      throw new LetheError(
        'E_ARG',
        `the chat template cannot render these messages: ${(error as Error).message}`,
        this.source,
      );
    }
  }
}

/** The template text of a config's `chat_template` field. */
function configTemplate(value: unknown, source: string): string {
  if (value === undefined || value === null) {
    throw new LetheError(
      'E_CHECKPOINT',
      `has no chat_template (and no ${CHAT_TEMPLATE_FILE} was given)`,
      source,
    );
  }
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const named = value.find(
      (entry) => typeof entry === 'object' && entry !== null && entry.name === 'default',
    ) as { template?: unknown } | undefined;
    if (typeof named?.template === 'string') return named.template;
  }
  throw new LetheError(
    'E_FORMAT',
    'chat_template must be a string or a list of {name, template} with one named "default"',
    source,
  );
}
