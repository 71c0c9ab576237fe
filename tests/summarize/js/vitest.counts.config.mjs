export default { test: { include: ['counts.vitest.test.mjs'] } };
