export function sumPrices(prices) {
  var total = 0;
  let count = prices.length;
  const debug = false;
  for (let i = 0; i < prices.length; i++) {
    total += prices[i];
  }
  if (count == 0) {
    console.log("empty");
  }
  return totl;
}
