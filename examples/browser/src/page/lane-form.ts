import type { LaneRequest } from '../worker/protocol';

/** Options a shipped learned policy runs with, by model id and policy name (`shipped.json`). */
export type ShippedOptions = (policy: string) => Readonly<Record<string, unknown>> | undefined;

/**
 * The form of one lane: a policy (a registry name, or names joined by `+`), its budget and its
 * options as JSON (the CLI's `--policy`, `--budget`, `--policy-options`).
 */
export class LaneForm {
  readonly root: HTMLFieldSetElement;
  private readonly policy: HTMLInputElement;
  private readonly budget: HTMLInputElement;
  private readonly options: HTMLTextAreaElement;
  private readonly policyFolder: HTMLInputElement;

  constructor(
    readonly lane: number,
    initialPolicy: string,
    private readonly shippedOptions: ShippedOptions,
  ) {
    this.root = document.createElement('fieldset');
    this.root.className = 'lane-form';
    const id = (name: string) => `${name}-${lane}`;
    this.root.innerHTML = `
      <legend>Lane ${lane + 1}</legend>
      <p class="row">
        <label for="${id('policy')}">Policy</label>
        <input id="${id('policy')}" list="policy-names" size="18" spellcheck="false" />
        <label for="${id('budget')}">Budget</label>
        <input id="${id('budget')}" type="number" min="0.01" max="1" step="0.05" value="0.25" />
      </p>
      <p>
        <label for="${id('options')}">Options (JSON; by part name for a composition a+b)</label>
        <textarea id="${id('options')}" rows="2" spellcheck="false" placeholder="{}"></textarea>
      </p>
      <p class="row">
        <label for="${id('policy-folder')}">Learned policy from a folder (else the shipped one)</label>
        <input id="${id('policy-folder')}" type="file" webkitdirectory multiple />
        <button id="${id('policy-folder-clear')}" type="button">Use the shipped one</button>
      </p>`;
    this.policy = this.root.querySelector(`#${id('policy')}`)!;
    this.budget = this.root.querySelector(`#${id('budget')}`)!;
    this.options = this.root.querySelector(`#${id('options')}`)!;
    this.policyFolder = this.root.querySelector(`#${id('policy-folder')}`)!;
    this.root.querySelector(`#${id('policy-folder-clear')}`)!.addEventListener('click', () => {
      this.policyFolder.value = '';
    });
    this.policy.addEventListener('change', () => this.policyChanged());
    this.setPolicy(initialPolicy);
  }

  /** Selects `name`, with the options it is shipped with and budget 1 for the full cache. */
  setPolicy(name: string): void {
    this.policy.value = name;
    this.policyChanged();
  }

  /** The lane's request, checked: a budget in (0, 1], options a JSON object. */
  read(): LaneRequest {
    const policy = this.policy.value.trim();
    if (policy === '') throw new Error(`Lane ${this.lane + 1}: choose a policy`);
    const budget = Number(this.budget.value);
    if (!(budget > 0 && budget <= 1)) {
      throw new Error(
        `Lane ${this.lane + 1}: the budget must be a number in (0, 1], got "${this.budget.value}"`,
      );
    }
    const text = this.options.value.trim();
    let options: unknown;
    try {
      options = text === '' ? undefined : JSON.parse(text);
    } catch (error) {
      throw new Error(`Lane ${this.lane + 1}: options are not JSON: ${(error as Error).message}`);
    }
    if (
      options !== undefined &&
      (typeof options !== 'object' || options === null || Array.isArray(options))
    ) {
      throw new Error(`Lane ${this.lane + 1}: options must be a JSON object`);
    }
    const folder = Array.from(this.policyFolder.files ?? []);
    return {
      policy,
      budget,
      options: options as LaneRequest['options'],
      policyFolder: folder.length === 0 ? undefined : folder,
    };
  }

  private policyChanged(): void {
    const name = this.policy.value.trim();
    const full = name === 'full';
    this.budget.disabled = full;
    if (full) this.budget.value = '1';
    else if (this.budget.value === '1') this.budget.value = '0.25';
    const parts = name.split('+');
    const shipped =
      parts.length === 1
        ? this.shippedOptions(name)
        : Object.fromEntries(
            parts.flatMap((part) => {
              const options = this.shippedOptions(part);
              return options === undefined ? [] : [[part, options]];
            }),
          );
    this.options.value =
      shipped === undefined || Object.keys(shipped).length === 0 ? '' : JSON.stringify(shipped);
  }
}
