/**
 * A syntax sample: every rule of tests/oracle/ts_scopes.js once or more.
 */
import { helper } from "./helper";

// Overloads: only the one with a body is a scope.
export function parse(text: string): number;
export function parse(text: string, radix: number): number;
export function parse(text: string, radix = 10): number {
  return parseInt(text, radix);
}

declare function ambient(x: number): void;

/** A documented function: its head is the JSDoc. */
export async function
load(url: string): Promise<string> {
  return url;
}

/** The first JSDoc of two: not the head. */
/**
 * The last JSDoc: the head.
 */
// a plain comment between does not matter
function twice(): void {}

/* A plain block comment is no head. */
function plain(): void {}

function outer() {
  function inner() {
    return 1;
  }
  const arrow = (x: number) => x * 2;
  return inner() + arrow(1);
}

export const handler = async (event: { id: string }) => {
  return event.id;
};

/** Two functions in one declaration list. */
export let first = function named() {
    return 1;
  },
  second = () => 2;

const notAFunction = 42, { destructured } = { destructured: () => 1 };

export abstract class Shape {
  abstract area(): number;
  protected abstract describe(): string;

  constructor(public readonly name: string) {}

  /** The perimeter. */
  perimeter(): number {
    return 0;
  }
}

function log(target: unknown, key?: string) {}
function sealed(ctor: Function) {}

/** A decorated class. */
@sealed
export class Circle extends Shape {
  #radius = 1;
  static count = 0;
  private onChange = (value: number) => {
    this.#radius = value;
  };
  readonly compute = function (this: Circle) {
    return this.#radius;
  };

  constructor(radius: number);
  constructor(radius: number, name: string);
  constructor(radius: number, name = "circle") {
    super(name);
    this.#radius = radius;
  }

  @log
  area(): number {
    return Math.PI * this.#radius ** 2;
  }

  @log
  /** Between a decorator and the name: not attached. */
  public static create(): Circle {
    return new Circle(1);
  }

  @log
  static
  build(): Circle {
    return new Circle(2);
  }

  describe(): string {
    return "circle";
  }

  get radius(): number {
    return this.#radius;
  }

  set radius(value: number) {
    this.#radius = value;
  }

  #secret(): number {
    return 42;
  }

  *[Symbol.iterator](): Iterator<number> {
    yield this.#radius;
  }

  async "quoted name"(): Promise<void> {}

  42(): number {
    return 42;
  }

  static {
    function insideStaticBlock() {}
  }
}

export interface Point {
  x: number;
  y: number;
  move(dx: number): void;
  get length(): number;
}

export const enum Direction {
  Up,
  Down,
}

enum Color {
  Red = "red",
}

namespace Geometry {
  export function distance(a: Point, b: Point): number {
    return Math.hypot(a.x - b.x, a.y - b.y);
  }
}

/** A dotted namespace. */
export namespace A.B {
  export class Inner {}
}

module Legacy {
  export const value = 1;
}

declare module "external" {
  export class Ambient {
    method(): void;
  }
}

declare global {
  interface Window {
    sample: string;
  }
}

// Callbacks and IIFEs are no scopes, what they hold is.
[1, 2, 3].forEach((n) => {
  function insideCallback() {
    return n;
  }
  insideCallback();
});

(function () {
  function insideIife() {}
  insideIife();
})();

const Mixed = class {
  run() {}
};

export const Named = class Inside {
  static make() {
    return new Inside();
  }
};

function mixin<T extends new (...args: any[]) => object>(Base: T) {
  return class extends Base {
    mixed() {}
  };
}

const api = {
  /** A property bound to an arrow function. */
  fetch: async (id: string) => id,
  "quoted-key": function () {},
  7: () => 7,
  [helper.name]: () => 0,
  method() {},
  async asyncMethod() {},
  *generator() {},
  get value() {
    return 1;
  },
  set value(v: number) {},
  nested: {
    deep() {},
  },
  notBound: (() => 1)(),
};

export default function () {
  return api;
}
