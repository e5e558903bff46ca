/** A strict XML parse (saxes: well-formedness errors throw) into a small element tree, for the export tests. */
import { SaxesParser } from "saxes";

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

export function parseXml(xml: string): { root: XmlElement; doctype: string | null } {
  const parser = new SaxesParser({ xmlns: false });
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  let doctype: string | null = null;
  let failure: Error | null = null;
  parser.on("error", (error) => {
    failure ??= error;
  });
  parser.on("doctype", (value) => (doctype = value));
  parser.on("opentag", (tag) => {
    const element: XmlElement = { name: tag.name, attributes: { ...tag.attributes }, children: [], text: "" };
    stack.at(-1)?.children.push(element);
    root ??= element;
    stack.push(element);
  });
  parser.on("text", (text) => {
    const current = stack.at(-1);
    if (current) current.text += text;
  });
  parser.on("closetag", () => void stack.pop());
  parser.write(xml).close();
  if (failure) throw failure;
  if (!root) throw new Error("no root element");
  return { root, doctype };
}

/** Every element named `name` under `element`, depth first. */
export function findAll(element: XmlElement, name: string): XmlElement[] {
  return [...(element.name === name ? [element] : []), ...element.children.flatMap((child) => findAll(child, name))];
}
