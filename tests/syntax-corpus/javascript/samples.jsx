/**
 * A syntax sample for JavaScript: what tests/oracle/ts_scopes.js finds in
 * plain JS and JSX.
 */
'use strict';

/** Prototype and exports assignments are no scopes. */
function Widget(props) {
  this.props = props;
}

Widget.prototype.render = function render() {
  function insideAssigned() {}
  return <div>{insideAssigned()}</div>;
};

module.exports = function exported() {};
exports.helper = () => 1;

var legacy = function () {
    return 1;
  },
  other = 2;

let counter = () => counter;

export class Store {
  static #instances = 0;
  items = [];
  onAdd = (item) => {
    this.items.push(item);
  };

  static
  create() {
    return new Store();
  }

  get size() {
    return this.items.length;
  }

  async *[Symbol.asyncIterator]() {
    yield* this.items;
  }
}

/** @param {{ name: string }} props */
export const Greeting = ({ name }) => (
  <p>
    Hello, {name}
  </p>
);

function App() {
  const handlers = {
    click() {},
    'hover-in': function () {},
  };
  return <Greeting name="x" onClick={() => handlers.click()} />;
}

export default class {
  render() {
    return <App />;
  }
}
