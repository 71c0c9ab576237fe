const { parse } = require('./counts');
const { describe, test, expect } = require('@jest/globals');

describe('parse', () => {
  test('error is reported for empty input', () => {
    expect(() => parse('')).toThrow('empty');
  });
  test('failed inputs give NaN', () => {
    expect(parse('x')).toBeNaN();
  });
  test('no panic on spaces', () => {
    expect(parse(' 7 ')).toBe(70);
  });
  describe('nested', () => {
    test('error free', () => {
      expect(parse('1')).toBe(1);
    });
    test('plain failure', () => {
      expect(parse('12')).toBe(21);
    });
  });
  test.skip('skipped error path', () => {});
  test.todo('error path to write');
});
