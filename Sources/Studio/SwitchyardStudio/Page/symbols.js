// The symbols a screen may name (Protocol/README.md §21.4), drawn here as small line icons on a 24×24 grid in the
// current text colour: bundled with the page, no external assets. The names are SF Symbols'; a test keeps this set
// equal to the protocol's (ScreenVocabulary.symbols).

const SVG = 'http://www.w3.org/2000/svg';

// Each symbol: shapes as [tag, attributes]. `d` paths are stroked; a `fill: true` shape is filled.
const circle = (cx, cy, r, fill = false) => ['circle', { cx, cy, r, fill }];
const rect = (x, y, width, height, rx) => ['rect', { x, y, width, height, rx }];
const path = (d) => ['path', { d }];

export const SYMBOLS = {
  'bell': [path('M6 16v-5a6 6 0 0 1 12 0v5l1.5 2h-15z'), path('M10 20.5a2 2 0 0 0 4 0')],
  'calendar': [rect(3, 5, 18, 16, 2), path('M3 10h18M8 3v4M16 3v4')],
  'checklist': [path('M3.5 6l1.5 1.5L7.5 5M3.5 12l1.5 1.5 2.5-2.5M3.5 18l1.5 1.5 2.5-2.5M11 6h9.5M11 12h9.5M11 18h9.5')],
  'checkmark': [path('M5 12.5l4.5 4.5L19 7')],
  'checkmark.circle': [circle(12, 12, 9), path('M8 12.5l3 3 5.5-6')],
  'circle': [circle(12, 12, 9)],
  'clock': [circle(12, 12, 9), path('M12 7v5l3.5 2')],
  'doc.text': [path('M6 3h8l4 4v14H6zM14 3v4h4M9 12h6M9 16h6')],
  'ellipsis': [circle(6, 12, 1.4, true), circle(12, 12, 1.4, true), circle(18, 12, 1.4, true)],
  'envelope': [rect(3, 5, 18, 14, 2), path('M3.5 6.5l8.5 6 8.5-6')],
  'exclamationmark.triangle': [path('M12 3.5l9.5 17h-19zM12 10v5M12 17.6v.4')],
  'flag': [path('M5 21V4h11l-2 4 2 4H5')],
  'folder': [path('M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z')],
  'gearshape': [circle(12, 12, 3), circle(12, 12, 6.5), path('M12 2.5v3M12 18.5v3M2.5 12h3M18.5 12h3M5.3 5.3l2.1 2.1M16.6 16.6l2.1 2.1M5.3 18.7l2.1-2.1M16.6 7.4l2.1-2.1')],
  'heart': [path('M12 20s-7.5-4.6-9-9.2A4.6 4.6 0 0 1 12 8a4.6 4.6 0 0 1 9 2.8C19.5 15.4 12 20 12 20z')],
  'house': [path('M3 11.5L12 4l9 7.5M5.5 10v10h5v-6h3v6h5V10')],
  'info.circle': [circle(12, 12, 9), path('M12 11v6M12 7.6v.4')],
  'key': [circle(8, 12, 4), path('M12 12h9M18 12v3M21 12v2')],
  'link': [path('M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1')],
  'list.bullet': [path('M9 6h11M9 12h11M9 18h11'), circle(4.5, 6, 1.2, true), circle(4.5, 12, 1.2, true), circle(4.5, 18, 1.2, true)],
  'lock': [rect(5, 11, 14, 10, 2), path('M8 11V8a4 4 0 0 1 8 0v3')],
  'magnifyingglass': [circle(10.5, 10.5, 6.5), path('M15.5 15.5L21 21')],
  'pencil': [path('M4 20l1-4L16 5l3 3L8 19zM14 7l3 3')],
  'person.2': [circle(9, 8.5, 3), path('M3 19c.6-3 3-5 6-5s5.4 2 6 5'), circle(17, 8, 2.5), path('M16.5 13.5c2.5 0 4.3 1.8 4.8 4.5')],
  'person.crop.circle': [circle(12, 12, 9), circle(12, 10, 3.2), path('M6.5 18.5c1.2-2.3 3.2-3.5 5.5-3.5s4.3 1.2 5.5 3.5')],
  'plus': [path('M12 5v14M5 12h14')],
  'plus.circle': [circle(12, 12, 9), path('M12 8v8M8 12h8')],
  'rectangle.portrait.and.arrow.right': [path('M14 4H6v16h8M11 12h10M17.5 8.5L21 12l-3.5 3.5')],
  'square.and.arrow.up': [path('M12 3v12M8 7l4-4 4 4M9 10H5v10h14V10h-4')],
  'star': [path('M12 3.5l2.6 5.4 5.9.8-4.3 4.1 1 5.8L12 16.8l-5.2 2.8 1-5.8-4.3-4.1 5.9-.8z')],
  'trash': [path('M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13M10 11v6M14 11v6')],
  'tray': [path('M3 13l3-8h12l3 8v6H3zM3 13h5l1 2h6l1-2h5')],
  'xmark': [path('M6 6l12 12M18 6L6 18')],
};

/** The chevron of a row that opens something (not a symbol a screen names: the shell's own). */
const CHEVRON = [path('M9.5 6l6 6-6 6')];

/** An `<svg>` of the symbol `name`, or null for a name the set does not have. */
export function symbol(name, className = 'symbol') {
  const shapes = name === 'chevron' ? CHEVRON : SYMBOLS[name];
  if (!shapes) return null;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('class', className);
  svg.setAttribute('aria-hidden', 'true');
  for (const [key, value] of [['fill', 'none'], ['stroke', 'currentColor'], ['stroke-width', '1.8'], ['stroke-linecap', 'round'], ['stroke-linejoin', 'round']]) {
    svg.setAttribute(key, value);
  }
  svg.dataset.symbol = name;
  for (const [tag, attributes] of shapes) {
    const shape = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attributes)) {
      if (key === 'fill') shape.setAttribute('fill', value ? 'currentColor' : 'none');
      else shape.setAttribute(key, String(value));
    }
    svg.append(shape);
  }
  return svg;
}
