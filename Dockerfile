# syntax=docker/dockerfile:1
# One image recipe for every Meld app. `APP` picks the app the container runs:
#   docker build --build-arg APP=ingest -t meld-ingest .
# The same image also runs the one-shot tools (`node tools/cli/meld.js migrate|topics`)
# and the SMSC simulator (`node tools/smsc/server.js`) by overriding the command, and any
# other app by overriding the `MELD_APP` environment variable (what k8s/ does).
#
# Stages: manifests (package.json files only, so the npm layers stay cached while source
# changes) -> deps (all deps) -> build (SWC, `npm run build`) and prod-deps (production
# deps only) -> runtime (node:20-slim, non-root, no dev dependencies, no sources of tests).

ARG NODE_IMAGE=node:20-slim

FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
# Keep the directory structure of every workspace package.json (libs/*) next to the root
# manifest and lockfile; nothing else, so editing source does not invalidate `npm ci`.
RUN mkdir -p /out \
 && cp package.json package-lock.json /out/ \
 && cp -r patches /out/ \
 && for d in libs/* apps/*; do \
      if [ -f "$d/package.json" ]; then mkdir -p "/out/$d" && cp "$d/package.json" "/out/$d/"; fi; \
    done

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY --from=manifests /out/ ./
# --ignore-scripts: the repo approves install scripts explicitly (package.json
# "allowScripts"); npm 10 in node:20 would run all of them. None is needed to build:
# @swc/core loads its prebuilt platform package, nx is not used by tools/build.mjs.
# The image's own npm (10.x) is used on purpose: npm 11 rejects the current lockfile
# (it lacks the non-Linux optional platform packages), npm 10.8.2 accepts it.
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts
# The one install step the repo runs itself: patches/ (patch-package) onto node_modules.
RUN npx --no-install patch-package --error-on-fail

FROM deps AS build
COPY . .
RUN npm run build

FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY --from=manifests /out/ ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts
# patch-package is a dev dependency: take the patched packages from the deps stage.
COPY --from=deps /app/node_modules/kafkajs ./node_modules/kafkajs

FROM ${NODE_IMAGE} AS runtime
# tini as PID 1: forwards SIGTERM to node (so consumers drain on stop) and reaps zombies.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 meld \
 && useradd --system --uid 10001 --gid meld --home-dir /app --no-create-home --shell /usr/sbin/nologin meld
WORKDIR /app
ENV NODE_ENV=production \
    MELD_HOST=0.0.0.0
# Files stay owned by root: the app user can read, not modify, its code.
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/tools ./tools
COPY --from=build /app/libs ./libs
COPY --from=build /app/apps ./apps

ARG APP=gateway
ENV MELD_APP=${APP}
RUN test -f "apps/${APP}/dist/main.js" || { echo "APP=${APP}: apps/${APP}/dist/main.js was not built" >&2; exit 1; }
LABEL org.opencontainers.image.title="meld-${APP}"

# Numeric user so Kubernetes can verify runAsNonRoot.
USER 10001:10001
EXPOSE 8080 8081 8082 8083 8084 8085 8086 8087

# Readiness of the app (its own stores): what docker compose's depends_on waits for.
# Port: MELD_PORT for the gateway, PORT for the others, else the app's default port from
# libs/contracts/src/apps.json (the one table of apps and ports).
HEALTHCHECK --interval=15s --timeout=5s --start-period=40s --retries=4 \
  CMD ["node", "-e", "const a=process.env.MELD_APP;let d=8080;try{d=require('/app/libs/contracts/src/apps.json')[a].port}catch{}const p=(a==='gateway'?process.env.MELD_PORT:process.env.PORT)||d;fetch('http://127.0.0.1:'+p+(process.env.MELD_HEALTH_PATH||'/readyz'),{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["sh", "-c", "exec node apps/${MELD_APP}/dist/main.js"]
