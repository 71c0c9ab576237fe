export interface Item {
  sku: string;
  qty: number;
  price: number;
}

export function lineTotal(item: Item): number {
  return item.qty * item.price;
}

export class Inventory {
  private items: Item[] = [];

  add(item: Item): void {
    this.items.push(item);
  }

  find(sku: string): Item | undefined {
    return this.items.find((i) => i.sku == sku);
  }

  restock(sku: string, amount: number): number {
    const item = this.find(sku);
    item.qty += amount;
    return item.quantity;
  }

  load(raw) {
    const draft = { sku: String(raw.sku), qty: String(raw.qty), price: 1 };
    const item: Item = draft;
    this.add(item);
  }
}
