function parse(text) {
  if (text === '') throw new Error('empty input');
  return Number(text.trim());
}
module.exports = { parse };
