// A small form generated from declared params (`{name, type, required}`, Protocol/README.md §5): a text field for a
// string, a number field for an integer or number, a checkbox for a boolean, JSON for the rest; each filled in with
// `initial[name]` when the screen shows a value of that name.
import { h } from './dom.js';

export function paramForm(params, { submitLabel, onSubmit, onCancel, testName, initial = {} }) {
  const fields = params.map((param) => {
    const id = `f-${testName}-${param.name}`.replace(/[^A-Za-z0-9_-]/g, '_');
    let input;
    if (param.type === 'boolean') input = h('input', { type: 'checkbox', id, name: param.name });
    else if (param.type === 'integer' || param.type === 'number') {
      input = h('input', { type: 'number', id, name: param.name, step: param.type === 'integer' ? '1' : 'any', required: param.required !== false });
    } else if (param.type === 'string') input = h('input', { type: 'text', id, name: param.name, required: param.required !== false, autocomplete: 'off' });
    else input = h('textarea', { id, name: param.name, rows: 2, placeholder: 'JSON', required: param.required !== false });
    const given = initial[param.name];
    if (given !== undefined && given !== null) {
      if (param.type === 'boolean') input.checked = Boolean(given);
      else if (param.type === 'string' || param.type === 'integer' || param.type === 'number') input.value = String(given);
      else input.value = JSON.stringify(given);
    }
    return { param, input, row: h('label', { class: 'field', for: id }, h('span', { class: 'field-name', text: param.name }), h('span', { class: 'field-type', text: param.type + (param.required === false ? '?' : '') }), input) };
  });
  const error = h('div', { class: 'form-error', role: 'alert' });
  const form = h('form', { class: 'param-form', dataset: { form: testName } },
    fields.map((field) => field.row),
    error,
    h('div', { class: 'form-buttons' },
      h('button', { type: 'submit', class: 'primary', text: submitLabel }),
      h('button', { type: 'button', class: 'quiet', text: 'Cancel', onclick: onCancel })));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const values = {};
    try {
      for (const { param, input } of fields) {
        if (param.type === 'boolean') { values[param.name] = input.checked; continue; }
        if (input.value === '' && param.required === false) continue;
        if (param.type === 'integer') values[param.name] = parseInt(input.value, 10);
        else if (param.type === 'number') values[param.name] = Number(input.value);
        else if (param.type === 'string') values[param.name] = input.value;
        else values[param.name] = JSON.parse(input.value);
      }
    } catch (problem) {
      error.textContent = `Not valid JSON: ${problem.message}`;
      return;
    }
    onSubmit(values).catch((problem) => { error.textContent = problem.message; });
  });
  queueMicrotask(() => fields[0]?.input.focus());
  return form;
}
