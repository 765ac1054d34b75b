// Just enough of a browser for the page's figure code to run outside one (attnlab.viz.notebook
// draws its SVG figures with it in V8): elements that keep attributes, children and text, a
// canvas that measures text from a table of glyph widths, and an XML serializer.

(() => {
  const widths = globalThis.GLYPH_WIDTHS; // { normal: {char: em}, bold: {char: em}, fallback }

  class ClassList {
    constructor(node) { this.node = node; }
    items() { return (this.node.getAttribute("class") ?? "").split(/\s+/).filter(Boolean); }
    set(items) { this.node.setAttribute("class", items.join(" ")); }
    add(...names) { this.set([...new Set([...this.items(), ...names])]); }
    remove(...names) { this.set(this.items().filter((n) => !names.includes(n))); }
    contains(name) { return this.items().includes(name); }
    toggle(name, force) {
      const on = force ?? !this.contains(name);
      if (on) this.add(name); else this.remove(name);
      return on;
    }
  }

  class Text {
    constructor(value) { this.value = String(value); }
    cloneNode() { return new Text(this.value); }
  }

  class Element {
    constructor(name) {
      this.tagName = name;
      this.attributes = new Map();
      this.childNodes = [];
      this.classList = new ClassList(this);
    }
    setAttribute(key, value) { this.attributes.set(key, String(value)); }
    getAttribute(key) { return this.attributes.has(key) ? this.attributes.get(key) : null; }
    removeAttribute(key) { this.attributes.delete(key); }
    appendChild(child) { this.childNodes.push(child); return child; }
    append(...children) {
      children.forEach((c) => this.appendChild(typeof c === "string" ? new Text(c) : c));
    }
    addEventListener() {}
    get textContent() {
      return this.childNodes.map((c) => (c instanceof Text ? c.value : c.textContent)).join("");
    }
    set textContent(value) { this.childNodes = [new Text(value)]; }
    cloneNode(deep = false) {
      const copy = new Element(this.tagName);
      this.attributes.forEach((value, key) => copy.attributes.set(key, value));
      if (deep) copy.childNodes = this.childNodes.map((c) => c.cloneNode(true));
      return copy;
    }
  }

  const escape = (s, quote) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;")
    .replace(/>/g, "&gt;").replace(quote ? /"/g : /$^/g, "&quot;");

  function serialize(node) {
    if (node instanceof Text) return escape(node.value, false);
    const attrs = [...node.attributes].map(([k, v]) => ` ${k}="${escape(v, true)}"`).join("");
    if (!node.childNodes.length) return `<${node.tagName}${attrs}/>`;
    return `<${node.tagName}${attrs}>${node.childNodes.map(serialize).join("")}</${node.tagName}>`;
  }

  function measureText(str) {
    // font: "<weight> <size>px <family>"
    const [weight, size] = this.font.split(" ");
    const table = weight === "bold" ? widths.bold : widths.normal;
    let em = 0;
    for (const c of String(str)) em += table[c] ?? widths.fallback;
    return { width: em * parseFloat(size) };
  }

  globalThis.window = globalThis;
  globalThis.document = {
    createElementNS: (ns, name) => new Element(name),
    createElement: (name) => {
      const node = new Element(name);
      if (name === "canvas") node.getContext = () => ({ font: "normal 12px sans-serif", measureText });
      return node;
    },
  };
  globalThis.XMLSerializer = class { serializeToString(node) { return serialize(node); } };
})();
