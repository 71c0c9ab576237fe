import { Inventory, lineTotal } from "./inventory";
import type { Item } from "./inventory";

export function total(items: Item[]): number {
  let sum = 0;
  let tax = 0.2;
  for (const item of items) {
    sum += lineTotal(item);
  }
  return sum * (1 + tax);
}

export function checkout(inventory: Inventory, skus: string[]): string {
  const unusedNote = "draft";
  const items = skus.map((sku) => inventory.find(sku));
  const amount = total(items);
  return amount;
}
