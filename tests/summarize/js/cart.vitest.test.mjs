import { total, discount } from './cart.js';
import { describe, test, expect } from 'vitest';

describe('total', () => {
  test('sums prices', () => {
    expect(total([{ price: 2 }, { price: 3 }])).toBe(5);
  });

  test('counts quantity', () => {
    expect(total([{ price: 2, quantity: 3 }])).toBe(6);
  });
});

describe('discount', () => {
  test('half price', () => {
    expect(discount([{ price: 10 }], 'HALF')).toBe(5);
  });

  test('unknown code', () => {
    expect(discount([{ price: 10 }], 'BOGUS')).toBe(10);
  });
});
