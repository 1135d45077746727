/**
 * The import rules of the workspace (STYLE.md, "Layout"), checked by
 * `pnpm deps` in CI. Every rule is an error: a rule that only warns is a rule
 * nobody keeps.
 *
 * - No cycles, type-only imports included (`tsPreCompilationDeps`).
 * - Packages import only downward: core <- codec <- client <- shell-node <- testkit,
 *   and cli and log-postgres on shell-node; a package's tests likewise (they may use their own
 *   package's sources and the packages below, never one above), except what
 *   `testsAlsoImport` names (the CLI's tests use the testkit).
 * - Inside shell-node/src, folders are layers, disk <- log <- store <- engine
 *   <- worker <- server: a module imports from its own folder or a
 *   lower one. The entries (src/index.ts, src/testing.ts) sit above them all.
 * - A folder's internal/ is private to that folder: src/store/internal/x may
 *   be imported by src/store/*.ts and src/store/internal/*, by nothing else
 *   of the sources. A package's own tests may still reach its internals
 *   (white-box tests of an internal module mirror it: test/internal/).
 *
 * `@tay/*` names resolve to the packages' sources through the paths of
 * tsconfig.test.json, so the package rules see them; an import that resolves
 * to nothing is an error too, so that no import escapes the rules unseen.
 */

/**
 * The testkit's pure arbitraries: they import only core, codec and
 * fast-check (a rule below holds them to it), so the codec's own property
 * tests may draw from them. That is a cycle between packages at test time
 * only, through modules that never reach the shell; it is the one
 * exception (docs/architecture.md).
 */
const pureArbitraries = "^packages/testkit/src/(Values|Events|Histories)\\.ts$";

/** The packages, each with the ones it may import, lowest first. */
const packages = {
  core: [],
  codec: ["core"],
  // The protocol's shapes live in the client, the lowest package that needs them;
  // the server (shell-node/src/server) imports them from there.
  client: ["core", "codec"],
  "shell-node": ["core", "codec", "client"],
  testkit: ["core", "codec", "shell-node"],
  "log-postgres": ["core", "codec", "shell-node"],
  // A store named by a postgres:// URL (docs/postgres.md, "The CLI").
  cli: ["core", "codec", "shell-node", "client", "log-postgres"],
};

/** The layers of packages/shell-node/src, lowest first. */
const layers = ["disk", "log", "store", "engine", "worker", "server"];
const shellSource = "^packages/shell-node/src/";

/**
 * What a package's tests may import beside what its sources may: the CLI's
 * tests write stores with the testkit (its legal histories and its store
 * writer; 2026-12-07). The testkit imports nothing of the CLI, so no cycle.
 */
const testsAlsoImport = { cli: ["testkit"] };

const packageRule = (name, allowed, scope) => {
  const others = Object.keys(packages).filter(
    (other) => other !== name && !allowed.includes(other),
  );
  const what = scope === "sources" ? "sources" : scope === "tests" ? "tests" : "sources and tests";
  return {
    name: scope === "tests" ? `package-${name}-tests` : `package-${name}`,
    comment: `${name} (${what}) may import ${
      allowed.length === 0 ? "no other package" : `only ${allowed.join(", ")}`
    } of the workspace's packages`,
    severity: "error",
    from: {
      path:
        scope === "tests"
          ? `^packages/${name}/test/`
          : scope === "sources"
            ? `^packages/${name}/(?!test/)`
            : `^packages/${name}/`,
    },
    to: {
      path: `^packages/(${others.join("|")})/`,
      ...(name === "codec" ? { pathNot: pureArbitraries } : {}),
    },
  };
};

const packageRules = Object.entries(packages).flatMap(([name, allowed]) => {
  const extra = testsAlsoImport[name];
  return extra === undefined
    ? [packageRule(name, allowed, "both")]
    : [packageRule(name, allowed, "sources"), packageRule(name, [...allowed, ...extra], "tests")];
});

const layerRules = layers.map((layer, index) => {
  const above = layers.slice(index + 1);
  return {
    name: `layer-${layer}`,
    comment: `shell-node's ${layer}/ may import only from ${layers
      .slice(0, index + 1)
      .join(", ")}: its own folder or a lower one, never the entries`,
    severity: "error",
    from: { path: `${shellSource}${layer}/` },
    to: {
      path: [
        ...(above.length === 0 ? [] : [`${shellSource}(${above.join("|")})/`]),
        `${shellSource}[^/]+$`,
      ],
    },
  };
});

/** Every internal/ folder of the packages' sources, at any depth. */
const internalFolders = ["^packages/[^/]+/src/internal/", "^packages/[^/]+/src/.+/internal/"];

const knownFolders = `${shellSource}(?!(${layers.join("|")})/)[^/]+/`;

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "no two modules import each other, directly or through others (types included)",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "not-to-unresolvable",
      comment: "every import resolves: one that resolves to nothing would escape every other rule",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
    ...packageRules,
    {
      name: "codec-sources-draw-no-arbitraries",
      comment:
        "the codec's sources never import the testkit's arbitraries: only its tests may (the exception above)",
      severity: "error",
      from: { path: "^packages/codec/src/" },
      to: { path: pureArbitraries },
    },
    {
      name: "pure-arbitraries-stay-pure",
      comment:
        "the testkit's Values, Events and Histories import only core, codec and fast-check: they load without the shell or any native addon of its own",
      severity: "error",
      from: { path: pureArbitraries },
      to: {
        path: [
          "^packages/(shell-node|cli)/",
          "^packages/testkit/src/(?!(Values|Events|Histories)\\.ts$)",
        ],
      },
    },
    ...layerRules,
    {
      name: "layer-unknown-folder",
      comment: `every folder of shell-node/src is one of the layers (${layers.join(", ")}): add a new one to .dependency-cruiser.cjs, in its place`,
      severity: "error",
      from: { path: knownFolders },
      to: {},
    },
    {
      name: "layer-unknown-folder-target",
      comment: `every folder of shell-node/src is one of the layers (${layers.join(", ")})`,
      severity: "error",
      from: {},
      to: { path: knownFolders },
    },
    // A folder's internal/ is private to it. Two rules, one for importers
    // outside an internal/ and one for importers inside one, because $1 (the
    // importer's folder) is captured differently; a single pattern for both
    // needs nested quantifiers, which dependency-cruiser refuses as unsafe.
    {
      name: "internal-private-to-its-folder",
      comment: "a folder's internal/ may be imported only by the modules of that folder",
      severity: "error",
      from: {
        path: "^(packages/.+)/[^/]+$",
        pathNot: ["/internal/[^/]+$", "^packages/[^/]+/test/"],
      },
      to: { path: internalFolders, pathNot: "^$1/internal/" },
    },
    {
      name: "internal-private-to-its-folder-from-internal",
      comment: "a module of an internal/ may import only its own internal/ of the internal folders",
      severity: "error",
      from: { path: "^(packages/.+)/internal/[^/]+$", pathNot: "^packages/[^/]+/test/" },
      to: { path: internalFolders, pathNot: "^$1/internal/" },
    },
    {
      name: "internal-tests-of-their-own-package",
      comment: "tests may reach internals of their own package's sources, never another package's",
      severity: "error",
      from: { path: "^packages/([^/]+)/test/" },
      to: { path: internalFolders, pathNot: "^packages/$1/src/" },
    },
  ],
  options: {
    // Type-only imports are dependencies too: a cycle through types is a cycle.
    tsPreCompilationDeps: true,
    // The @tay/* paths: each name to its package's sources.
    tsConfig: { fileName: "tsconfig.test.json" },
    doNotFollow: { path: "node_modules" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
    },
  },
};
