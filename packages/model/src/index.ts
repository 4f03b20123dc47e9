/**
 * `@lethe/model`: a readable Llama/Qwen2-style decoder in tfjs with parallel prefill, cached
 * decode and policy hooks; safetensors / HF-config I/O (one file or shards); a character
 * tokenizer, Hugging Face tokenizers and chat templates; an SFT trainer; and the generation
 * runtime (`generate`, `GenerationSession`). Browser-safe: Node file I/O is in
 * `@lethe/model/node`.
 *
 * @packageDocumentation
 */
export * from './decoder/index';
export * from './io/index';
export * from './runtime/index';
export * from './tokenizer/index';
export * from './train/index';
