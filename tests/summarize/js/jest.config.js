module.exports = { testMatch: ['**/cart.test.js'] };
