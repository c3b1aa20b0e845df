// The shop's cart (test/sourcemaps.test.ts): the error is thrown here, and the event page must show this line.
export function addToCart(cart, item) {
  if (!item.sku) {
    throw new Error(`cannot add ${item.name} without a sku`);
  }
  cart.items.push(item);
  return cart;
}
