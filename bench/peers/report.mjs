// The comparison's outputs: Markdown tables (every figure beside its
// durability setting and its ratios to the raw-fsync limit and to Tay) and
// one hand-written SVG bar chart per workload (log scale: the figures span
// three orders of magnitude).
import { formatNumber, formatRatio } from "../../packages/shell-node/bench/lib/common.mjs";

const systemColors = { Tay: "#2563eb", SQLite: "#059669", BullMQ: "#dc2626", raw: "#6b7280" };
const classOpacity = { sync: 1, window: 0.6, none: 0.35 };
const classLabels = {
  sync: "synced before ack",
  window: "crash-safe, power-loss window",
  none: "never synced",
};

/** Decimals that show at least two significant digits of a small value. */
const digitsFor = (value) => (value < 0.01 ? 4 : value < 1 ? 3 : value < 10 ? 2 : 0);

const escapeXml = (text) =>
  String(text).replace(
    /[&<>"]/g,
    (character) => `&${{ "&": "amp", "<": "lt", ">": "gt", '"': "quot" }[character]};`,
  );

/**
 * A horizontal bar chart: `groups` of bars `{ label, value, system,
 * durabilityClass }`, on a log10 axis (or linear when `log` is false), values
 * printed at the bar ends with `unit`. Returns the SVG text.
 */
export const barChart = ({ title, unit, groups, log = true, lowerIsBetter = false }) => {
  const barHeight = 16;
  const gap = 4;
  const groupGap = 14;
  const labelWidth = 250;
  const plotWidth = 520;
  const valueWidth = 110;
  const top = 48;
  const width = labelWidth + plotWidth + valueWidth;
  const values = groups
    .flatMap((group) => group.bars.map((bar) => bar.value))
    .filter((value) => value > 0);
  const maxValue = Math.max(...values, 1);
  const minValue = Math.min(...values, maxValue);
  const logMin = Math.floor(Math.log10(Math.max(minValue, 1e-9)));
  const logMax = Math.ceil(Math.log10(maxValue));
  const scale = (value) => {
    if (!(value > 0)) return 0;
    if (!log) return (plotWidth * value) / maxValue;
    const span = Math.max(1, logMax - logMin);
    return Math.max(2, (plotWidth * (Math.log10(value) - logMin + 0.15)) / (span + 0.15));
  };
  const parts = [];
  let y = top;
  for (const group of groups) {
    parts.push(
      `<text x="8" y="${y + 11}" font-weight="bold" font-size="12">${escapeXml(group.label)}</text>`,
    );
    y += barHeight + gap;
    for (const bar of group.bars) {
      const barWidth = scale(bar.value);
      const color = systemColors[bar.system] ?? "#999";
      const opacity = classOpacity[bar.durabilityClass] ?? 1;
      parts.push(
        `<text x="${labelWidth - 6}" y="${y + 12}" text-anchor="end" font-size="11">${escapeXml(bar.label)}</text>`,
        `<rect x="${labelWidth}" y="${y}" width="${barWidth.toFixed(1)}" height="${barHeight}" fill="${color}" fill-opacity="${opacity}"/>`,
        `<text x="${labelWidth + barWidth + 4}" y="${y + 12}" font-size="11">${escapeXml(
          bar.value > 0 ? `${formatNumber(bar.value, digitsFor(bar.value))} ${unit}` : "n/a",
        )}</text>`,
      );
      y += barHeight + gap;
    }
    y += groupGap;
  }
  const axis = [];
  if (log) {
    for (let power = logMin; power <= logMax; power++) {
      const x = labelWidth + scale(10 ** power);
      axis.push(
        `<line x1="${x.toFixed(1)}" y1="${top - 6}" x2="${x.toFixed(1)}" y2="${y - groupGap}" stroke="#ddd"/>`,
        `<text x="${x.toFixed(1)}" y="${top - 10}" text-anchor="middle" font-size="10" fill="#666">${formatNumber(10 ** power, power < 0 ? -power : 0)}</text>`,
      );
    }
  }
  const legendY = y + 4;
  const legend = [
    ...Object.entries(systemColors).map(
      ([system, color], index) =>
        `<rect x="${8 + index * 90}" y="${legendY}" width="12" height="12" fill="${color}"/><text x="${24 + index * 90}" y="${legendY + 10}" font-size="11">${system === "raw" ? "raw disk" : system}</text>`,
    ),
    ...Object.entries(classLabels).map(
      ([durabilityClass, label], index) =>
        `<rect x="${8 + index * 230}" y="${legendY + 20}" width="12" height="12" fill="#444" fill-opacity="${classOpacity[durabilityClass]}"/><text x="${24 + index * 230}" y="${legendY + 30}" font-size="11">${label}</text>`,
    ),
  ];
  const height = legendY + 44;
  const subtitle = `${unit}, ${log ? "log scale" : "linear scale"}, ${lowerIsBetter ? "lower is better" : "higher is better"}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="8" y="18" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="8" y="34" font-size="11" fill="#555">${escapeXml(subtitle)}</text>`,
    ...axis,
    ...parts,
    ...legend,
    "</svg>",
    "",
  ].join("\n");
};

const cell = (value, digits = 0) => (Number.isFinite(value) ? formatNumber(value, digits) : "n/a");
const ms = (value) => (Number.isFinite(value) ? formatNumber(value, value < 10 ? 2 : 1) : "n/a");

/** A Markdown table from a header row and body rows. */
export const markdownTable = (header, rows) =>
  [
    `| ${header.join(" | ")} |`,
    `| ${header.map((_, index) => (index === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`),
  ].join("\n");

/**
 * The table of one case of a throughput workload: each row's jobs/s,
 * latencies, its share of the raw-fsync limit, and Tay's ratios to it (Tay
 * Maximal, and Tay at the same durability class).
 */
export const throughputTable = (caseResult, { extraColumns = [] } = {}) => {
  const byId = new Map(caseResult.rows.map((row) => [row.settingId, row]));
  const rawLimit = caseResult.rows.find((row) => row.settingId === "raw-fsync")?.jobsPerSecond;
  const header = [
    "system",
    "durability",
    "jobs/s",
    "p50 ms",
    "p99 ms",
    ...extraColumns.map((column) => column.title),
    "÷ raw fsync limit",
    "Tay Maximal ÷ this",
    "Tay same class ÷ this",
  ];
  const rows = caseResult.rows.map((row) => {
    const tayMaximal = byId.get("tay-maximal")?.jobsPerSecond;
    const sameClass = byId.get(row.sameClassTayId)?.jobsPerSecond;
    const isTay = row.system === "Tay";
    return [
      `${row.system} ${row.setting}`,
      row.durabilityClass === undefined ? "" : classLabels[row.durabilityClass],
      cell(row.jobsPerSecond),
      ms(row.p50),
      ms(row.p99),
      ...extraColumns.map((column) => column.value(row)),
      rawLimit === undefined ? "n/a" : `${formatNumber((100 * row.jobsPerSecond) / rawLimit, 1)}%`,
      row.system === "raw" || row.settingId === "tay-maximal"
        ? ""
        : formatRatio(tayMaximal / row.jobsPerSecond),
      row.system === "raw" || isTay || sameClass === undefined
        ? ""
        : formatRatio(sameClass / row.jobsPerSecond),
    ];
  });
  return markdownTable(header, rows);
};

/** The table of a one-figure workload (cold start seconds, bytes per job). */
export const figureTable = (rows, { title, digits, ratioTitle, extra = [] }) =>
  markdownTable(
    ["system", "durability", title, ...extra.map((column) => column.title), ratioTitle],
    rows.map((row) => [
      `${row.system} ${row.setting}`,
      row.durabilityClass === undefined ? "" : classLabels[row.durabilityClass],
      cell(row.value, digits),
      ...extra.map((column) => column.value(row)),
      row.ratio === undefined ? "" : formatRatio(row.ratio),
    ]),
  );

export { classLabels };
