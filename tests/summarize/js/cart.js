// A cart with two bugs, for the jest and vitest captures.
function total(items) {
  return items.reduce((sum, i) => sum + i.price, 0);
}

function discount(items, code) {
  const rates = { HALF: 0.5 };
  return total(items) * rates[code].toFixed(2);
}

module.exports = { total, discount };
