import { strict as assert } from 'node:assert';
import { optionButtonLabels } from '../../../src/common/option-labels';

describe('common: permission options as button labels', () => {
  it("shows an ACP option's name without its kind, keeping the order", () => {
    assert.deepEqual(optionButtonLabels(['Allow (allow_once)', 'Reject (reject_once)', 'Allow always (allow_always)']), ['Allow', 'Reject', 'Allow always']);
  });

  it('keeps the kind where the names alone would read the same, or say nothing', () => {
    assert.deepEqual(optionButtonLabels(['Yes (allow_once)', 'Yes (allow_always)', 'No (reject_once)']), ['Yes (allow_once)', 'Yes (allow_always)', 'No']);
    assert.deepEqual(optionButtonLabels([' (allow_once)', 'Deny (reject_once)']), [' (allow_once)', 'Deny']);
  });

  it("leaves an agent's own question options as they are (no kind to drop)", () => {
    assert.deepEqual(optionButtonLabels(['tabs', 'spaces (reject once)', 'Bonjour (fr)']), ['tabs', 'spaces (reject once)', 'Bonjour (fr)']);
  });
});
