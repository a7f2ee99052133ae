// Node labels that always fit their box: each line is cut to the box's width, measured in
// the font the graph draws with, and ends with an ellipsis when cut; the full text is the
// node's tooltip. Together with the zoom range (ZOOM) no label is drawn smaller than
// LABEL_FLOOR_PX on screen, overlaps another or spills out of its box.

/** The font the graph's labels are drawn in (graph/style.ts uses it too). */
export const LABEL_FONT_FAMILY = "Helvetica, Arial, sans-serif";
/** The smallest label font size in the stylesheet, in graph units. */
export const SMALLEST_FONT = 10;
/** No label is drawn smaller than this on screen, at any zoom the view offers. */
export const LABEL_FLOOR_PX = 8;
/** The zoom range of the view: its lower end keeps the smallest font at the floor. */
export const ZOOM = { min: LABEL_FLOOR_PX / SMALLEST_FONT, max: 3 };
/** The width a label line may take inside a 170-unit-wide node. */
export const LABEL_WIDTH = 154;

let context: CanvasRenderingContext2D | null = null;
const measured = new Map<string, number>();

function width(text: string, fontPx: number, bold: boolean): number {
  const key = `${fontPx}${bold ? "b" : ""}|${text}`;
  let value = measured.get(key);
  if (value === undefined) {
    context ??= document.createElement("canvas").getContext("2d");
    if (!context) return text.length * fontPx * 0.6;
    context.font = `${bold ? "bold " : ""}${fontPx}px ${LABEL_FONT_FAMILY}`;
    value = context.measureText(text).width;
    if (measured.size > 50_000) measured.clear();
    measured.set(key, value);
  }
  return value;
}

/** `text` cut (with an ellipsis) to at most `maxWidth` graph units in the given font size. */
export function fitLine(text: string, fontPx: number, maxWidth = LABEL_WIDTH, bold = false): string {
  if (width(text, fontPx, bold) <= maxWidth) return text;
  let low = 0, high = text.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (width(`${text.slice(0, mid)}…`, fontPx, bold) <= maxWidth) low = mid;
    else high = mid - 1;
  }
  return `${text.slice(0, low)}…`;
}

/** Every line of a label fitted to the node's width. */
export function fitLabel(label: string, fontPx: number, maxWidth = LABEL_WIDTH): string {
  return label.split("\n").map((line) => fitLine(line, fontPx, maxWidth)).join("\n");
}
