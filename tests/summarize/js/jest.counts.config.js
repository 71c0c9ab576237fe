module.exports = { testMatch: ['**/counts.test.js'] };
