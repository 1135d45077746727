import { KeyTable } from "../../core/dist/internal/KeyTable.js";
const N = 600000;
const randomKey = (index) => `key-${(Math.imul(index, 0x9e3779b1) >>> 0).toString(16)}`;
const seqKey = (index) => `key-${index}`;
for (const [name, f] of [["seq", seqKey], ["rand", randomKey], ["seq", seqKey], ["rand", randomKey]]) {
  const keys = Array.from({ length: N }, (_, i) => f(i));
  for (let r = 0; r < 3; r++) {
    const t = new KeyTable();
    const s = process.hrtime.bigint();
    for (let i = 0; i < N; i++) {
      if (t.get(keys[i]) === undefined) t.set(keys[i], i + 1);
    }
    console.log(name, (Number(process.hrtime.bigint() - s) / N).toFixed(0));
  }
}
