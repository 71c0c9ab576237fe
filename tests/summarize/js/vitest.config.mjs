export default { test: { include: ['cart.vitest.test.mjs'] } };
