export const formatPrice = (cents: number): string => {
  const label = cents / 100;
  return label;
};

export const describe = (item, currency: string) => `${item.sku}: ${currency}`;

export const pad = (text: string, width: number) => {
  if (text.length == width) return text;
  return text.padStart(width, 0);
};

export const banner = (title: string) => {
  let line = '=' .repeat(title.length);
  return `${line}\n${title}\n${line}`;
};
