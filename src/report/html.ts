// The report page: one self-contained HTML file that works from file:// with
// no network at all. Its CSS and script are inline, its map is inline SVG, its
// thumbnails and images are files beside it named by relative paths, and a
// Content-Security-Policy forbids it anything else. Every text that came from
// a batch file, a server or a file name is escaped. At thousands of images it
// stays quick: thumbnails load lazily, and the cards are grids of SECTION_SIZE
// each, of which those off screen are not laid out (content-visibility) until
// scrolled to. One grid of thousands would be laid out again as a whole at
// every step of a scroll; a section is small, and there are few of them.
import { located, REPORT_SCENE_FIELDS, sceneKey, sceneLabel, type ReportImage, type ReportStatus } from './images.js';
import { landPath, MAP_HEIGHT, MAP_WIDTH, project } from './world-map.js';

export interface ReportPage {
  title: string;
  /** One line under the title: what the report is of. */
  subtitle: string;
  images: ReadonlyArray<ReportImage & { href?: string; thumbnail?: string }>;
  generatedAt: Date;
  generator: string;
  /** What the page counts: images (an export), or rows (a batch, whose invalid rows have none). */
  noun?: 'image' | 'row';
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char]!);
}

/** A relative path as a URL: each segment percent-encoded, so names with `#`, `?` or spaces still lead to their file. */
export function pathUrl(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

const STATUS_ORDER: ReportStatus[] = ['done', 'failed', 'skipped'];

/**
 * Cards per section: a multiple of every column count the page shows (1 to 6;
 * it is at most 1950 px wide), so that a section's last row is full. The
 * filters deal the cards shown into the sections anew, in order.
 */
export const SECTION_SIZE = 60;

/** A timestamp as people read it, in UTC; text that is not one is shown as it is. */
/** A time as people read it, to the minute in UTC; empty for none, or for what is not a time (shown as given, not in a <time>). */
function when(createdAt: string | undefined): string {
  if (!createdAt) return '';
  const time = Date.parse(createdAt);
  if (Number.isNaN(time)) return '';
  return `${new Date(time).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function title(image: ReportImage): string {
  if (image.id !== undefined) return image.id;
  return image.row !== undefined ? `Row ${image.row}` : 'Image';
}

/** The attribute that names an image on the map and on its card: its id, or for a batch row without one, its row. */
function identity(image: ReportImage): string {
  if (image.id !== undefined) return `data-id="${escapeHtml(image.id)}"`;
  return image.row !== undefined ? `data-row="${image.row}"` : '';
}

function sceneValue(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return typeof value === 'string' || typeof value === 'number' ? String(value) : JSON.stringify(value);
}

function card(image: ReportPage['images'][number], index: number): string {
  const position = located(image);
  const resolution = typeof image.scene.resolution === 'string' ? image.scene.resolution : '';
  const thumb = image.thumbnail
    ? `<a class="thumb" href="${escapeHtml(pathUrl(image.href ?? image.thumbnail))}"><img src="${escapeHtml(pathUrl(image.thumbnail))}" loading="lazy" decoding="async" alt="${escapeHtml(title(image))}"></a>`
    : image.href
      ? `<a class="thumb none" href="${escapeHtml(pathUrl(image.href))}">no preview</a>`
      : `<div class="thumb none">${image.status === 'done' ? 'no image file' : 'no image'}</div>`;
  const scene = REPORT_SCENE_FIELDS.filter((field) => image.scene[sceneKey(field)] !== undefined)
    .map((field) => `<dt>${escapeHtml(sceneLabel(field))}</dt><dd>${escapeHtml(sceneValue(image.scene[sceneKey(field)]))}</dd>`)
    .join('');
  const where = position ? `${position.lat}, ${position.lng}` : 'no location';
  const created = when(image.createdAt);
  return [
    `<article class="card" id="c${index}" ${identity(image)} data-status="${image.status}" data-resolution="${escapeHtml(resolution)}" data-tags="${escapeHtml(JSON.stringify(image.tags))}">`,
    thumb,
    `<div class="body"><h2><span class="name">${escapeHtml(title(image))}</span> <span class="badge ${image.status}">${image.status}</span></h2>`,
    `<p class="where">${escapeHtml(where)}${created ? ` · <time datetime="${escapeHtml(new Date(image.createdAt!).toISOString())}">${escapeHtml(created)}</time>` : image.createdAt ? ` · ${escapeHtml(image.createdAt)}` : ''}</p>`,
    scene ? `<dl>${scene}</dl>` : '',
    image.tags.length ? `<p class="tags">${image.tags.map((tag) => `<span>${escapeHtml(tag)}</span>`).join('')}</p>` : '',
    image.error ? `<p class="error">${escapeHtml(image.error)}</p>` : '',
    '</div></article>',
  ].join('');
}

function marker(image: ReportImage, index: number): string {
  const position = located(image);
  if (!position) return '';
  const [x, y] = project(position.lng, position.lat);
  return `<circle class="marker ${image.status}" cx="${x}" cy="${y}" r="3" ${identity(image)} data-card="c${index}"><title>${escapeHtml(title(image))}</title></circle>`;
}

function options(values: Iterable<string>, label: (value: string) => string = (value) => value): string {
  return [...values].map((value) => `<option value="${escapeHtml(value)}">${escapeHtml(label(value))}</option>`).join('');
}

const STYLE = `
:root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1b1f24;--muted:#5b6470;--card:#fff;--line:#dde1e6;--sea:#dbe8f3;--land:#c9d3c0;--done:#2a7f40;--failed:#c8372d;--skipped:#6b7079;--failed-text:#c8372d}
@media (prefers-color-scheme:dark){:root{--bg:#15181c;--fg:#e6e9ed;--muted:#9aa3ad;--card:#1f2328;--line:#2e343b;--sea:#1b2a38;--land:#3a4436;--failed-text:#ff8a80}}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg)}
header{padding:16px 24px 8px}h1{font-size:20px;margin:0}.sub{margin:4px 0 0;color:var(--muted)}
.map{padding:8px 24px}.map svg{display:block;width:100%;max-height:60vh;background:var(--sea);border:1px solid var(--line);border-radius:8px}
.land{fill:var(--land);stroke:none}.marker{stroke:#fff;stroke-width:.8;cursor:pointer;fill:var(--done)}.marker.failed{fill:var(--failed)}.marker.skipped{fill:var(--skipped)}
.marker{transform-box:fill-box;transform-origin:center}.marker:hover,.marker.focus{transform:scale(1.7);stroke:#000}.marker.off{display:none}
.filters{position:sticky;top:0;z-index:1;display:flex;flex-wrap:wrap;gap:12px;align-items:center;padding:10px 24px;background:var(--bg);border-bottom:1px solid var(--line)}
.filters label{display:flex;gap:6px;align-items:center;color:var(--muted)}.filters select{font:inherit}#shown{margin-left:auto;font-weight:600}
main{max-width:1950px;margin:0 auto;padding:16px 0 40px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:14px;padding:0 24px 14px;content-visibility:auto;contain-intrinsic-size:auto 6000px}.cards[hidden]{display:none}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;overflow:hidden}
.card.focus{outline:3px solid #2f6fdd;outline-offset:2px}.card[hidden]{display:none}
.thumb{display:block;aspect-ratio:16/9;background:#222}.thumb img{display:block;width:100%;height:100%;object-fit:contain}
.thumb.none{display:flex;align-items:center;justify-content:center;color:#aaa;text-decoration:none}
.body{padding:10px 12px 12px}h2{font-size:14px;margin:0 0 4px;display:flex;gap:8px;align-items:baseline;justify-content:space-between}
.name{overflow-wrap:anywhere}.badge{font-size:11px;padding:1px 7px;border-radius:9px;color:#fff;background:var(--done)}.badge.failed{background:var(--failed)}.badge.skipped{background:var(--skipped)}
.where{margin:0 0 8px;color:var(--muted)}dl{display:grid;grid-template-columns:auto 1fr;gap:1px 10px;margin:0 0 8px;font-size:12px}dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}
.tags{margin:0 0 6px;display:flex;flex-wrap:wrap;gap:4px}.tags span{font-size:12px;padding:0 6px;border:1px solid var(--line);border-radius:4px}
.error{margin:6px 0 0;color:var(--failed-text);font-size:12px;overflow-wrap:anywhere}`;

const SCRIPT = `
(() => {
  const SECTION_SIZE = ${SECTION_SIZE};
  const cards = [...document.querySelectorAll('.card')];
  const sections = [...document.querySelectorAll('main > .cards')];
  const filteredOut = document.getElementById('filtered-out');
  const tagsOf = new Map(cards.map((card) => [card, JSON.parse(card.dataset.tags)]));
  const markers = new Map([...document.querySelectorAll('.marker')].map((m) => [m.dataset.card, m]));
  const status = document.getElementById('f-status');
  const tag = document.getElementById('f-tag');
  const resolution = document.getElementById('f-resolution');
  const shown = document.getElementById('shown');
  // The cards shown are dealt into the sections in order (a card already in its place is not moved); the others wait, hidden.
  const apply = () => {
    let count = 0;
    let previous = null;
    for (const card of cards) {
      const visible = (!status.value || card.dataset.status === status.value) &&
        (!resolution.value || card.dataset.resolution === resolution.value) &&
        (!tag.value || tagsOf.get(card).includes(tag.value));
      card.hidden = !visible;
      markers.get(card.id)?.classList.toggle('off', !visible);
      if (visible) {
        const section = sections[Math.floor(count / SECTION_SIZE)];
        if (count % SECTION_SIZE === 0) previous = null;
        if (card.parentNode !== section || card.previousElementSibling !== previous) section.insertBefore(card, previous ? previous.nextSibling : section.firstChild);
        previous = card;
        count++;
      } else if (card.parentNode !== filteredOut) {
        filteredOut.appendChild(card);
      }
    }
    sections.forEach((section, index) => (section.hidden = index * SECTION_SIZE >= count));
    shown.textContent = 'Showing ' + count + ' of ' + cards.length;
  };
  for (const select of [status, tag, resolution]) select.addEventListener('change', apply);
  let focused;
  const focus = (card) => {
    if (card.hidden) {
      status.value = tag.value = resolution.value = '';
      apply();
    }
    for (const element of focused ?? []) element.classList.remove('focus');
    focused = [card, markers.get(card.id)].filter(Boolean);
    for (const element of focused) element.classList.add('focus');
    card.scrollIntoView({ block: 'center' });
    history.replaceState(null, '', '#' + card.id);
  };
  document.querySelector('.map svg').addEventListener('click', (event) => {
    const marker = event.target.closest('.marker');
    if (marker) focus(document.getElementById(marker.dataset.card));
  });
  apply();
})();`;

/** The cards in sections of SECTION_SIZE (at least one, for an empty report). */
function sections(cards: string[]): string {
  const parts: string[] = [];
  for (let start = 0; start === 0 || start < cards.length; start += SECTION_SIZE) {
    parts.push(`<div class="cards">\n${cards.slice(start, start + SECTION_SIZE).join('\n')}\n</div>`);
  }
  return parts.join('\n');
}

/** What the page's header and filters say of all its images, gathered in one pass so the page can then be written image by image. */
export interface ReportSummary {
  total: number;
  byStatus: Map<ReportStatus, number>;
  tags: Set<string>;
  resolutions: Set<string>;
}

export function emptySummary(): ReportSummary {
  return { total: 0, byStatus: new Map(), tags: new Set(), resolutions: new Set() };
}

export function addToSummary(summary: ReportSummary, image: ReportImage): void {
  summary.total++;
  summary.byStatus.set(image.status, (summary.byStatus.get(image.status) ?? 0) + 1);
  for (const tag of image.tags) summary.tags.add(tag);
  if (typeof image.scene.resolution === 'string') summary.resolutions.add(image.scene.resolution);
}

type PageHead = Omit<ReportPage, 'images'>;
type PageImage = ReportPage['images'][number];

function statusesOf(summary: ReportSummary): ReportStatus[] {
  return STATUS_ORDER.filter((status) => summary.byStatus.has(status));
}

const CSP = "default-src 'none'; img-src 'self' file: data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'";

/** The page up to its map's markers. */
function pageStart(page: PageHead, summary: ReportSummary): string {
  const counts = statusesOf(summary).map((status) => `${summary.byStatus.get(status)} ${status}`).join(', ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="generator" content="${escapeHtml(page.generator)}">
<title>${escapeHtml(page.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>${escapeHtml(page.title)}</h1><p class="sub">${escapeHtml(page.subtitle)} · ${summary.total} ${page.noun ?? 'image'}${summary.total === 1 ? '' : 's'}${counts ? ` (${escapeHtml(counts)})` : ''} · made ${escapeHtml(when(page.generatedAt.toISOString()))} by ${escapeHtml(page.generator)}</p></header>
<div class="map"><svg viewBox="0 0 ${MAP_WIDTH} ${MAP_HEIGHT}" role="img" aria-label="World map with one marker per image"><path class="land" d="${landPath()}"/><g class="markers">`;
}

/** From the end of the markers to the first section of cards. */
function pageMiddle(summary: ReportSummary): string {
  const tags = [...summary.tags].sort((a, b) => a.localeCompare(b));
  const resolutions = [...summary.resolutions].sort();
  return `</g></svg></div>
<div class="filters" role="search">
<label>Status <select id="f-status"><option value="">all</option>${options(statusesOf(summary))}</select></label>
<label>Tag <select id="f-tag"><option value="">all</option>${options(tags)}</select></label>
<label>Resolution <select id="f-resolution"><option value="">all</option>${options(resolutions)}</select></label>
<output id="shown">Showing ${summary.total} of ${summary.total}</output>
</div>
<main>
`;
}

function pageEnd(): string {
  return `
<div id="filtered-out" hidden></div>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/** The whole page. */
export function reportHtml(page: ReportPage): string {
  const { images } = page;
  const summary = emptySummary();
  for (const image of images) addToSummary(summary, image);
  // Markers of failed rows are drawn last, on top: they are what a reviewer looks for.
  const order = images.map((image, index) => ({ image, index })).sort((a, b) => STATUS_ORDER.indexOf(a.image.status) - STATUS_ORDER.indexOf(b.image.status));
  return `${pageStart(page, summary)}${order.map(({ image, index }) => marker(image, index)).join('')}${pageMiddle(summary)}${sections(images.map((image, index) => card(image, index)))}${pageEnd()}`;
}

/**
 * reportHtml for images read one at a time (an export's index on disk): the
 * same bytes, handed to `append` piece by piece. `images` is walked once per
 * status present (markers of failed rows last) and once for the cards; the
 * summary comes from a walk before.
 */
export async function writeReportHtml(
  page: PageHead,
  summary: ReportSummary,
  images: () => AsyncIterable<PageImage>,
  append: (chunk: string) => Promise<void>,
): Promise<void> {
  await append(pageStart(page, summary));
  for (const status of statusesOf(summary)) {
    let index = 0;
    for await (const image of images()) {
      if (image.status === status) await append(marker(image, index));
      index++;
    }
  }
  await append(pageMiddle(summary));
  await append('<div class="cards">\n');
  let index = 0;
  for await (const image of images()) {
    if (index > 0) await append(index % SECTION_SIZE === 0 ? '\n</div>\n<div class="cards">\n' : '\n');
    await append(card(image, index));
    index++;
  }
  await append('\n</div>');
  await append(pageEnd());
}
