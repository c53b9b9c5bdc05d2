# syntax=docker/dockerfile:1
# lookout: built with dev dependencies, run with production dependencies only, as a non-root user.

# Native modules (better-sqlite3) build from source: the build stages carry a compiler, the runtime does not.
FROM node:22-bookworm-slim AS toolchain
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./

FROM toolchain AS build
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM toolchain AS prod-deps
RUN npm ci --omit=dev

FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json config.example.yaml lookout.schema.json ./
COPY rules ./rules
RUN mkdir -p /var/lib/lookout /etc/lookout && chown -R node:node /var/lib/lookout
USER node
# The DB lives on a volume; mount the config at /etc/lookout/config.yaml and pass secrets as environment variables
# (DATA_API_KEY, SLACK_WEBHOOK_URL, SMTP_PASS, ...). Inside the container the listener binds 0.0.0.0.
VOLUME ["/var/lib/lookout"]
# glibc's malloc keeps an arena per thread that allocates (up to 8 per core), each holding the memory it freed: at
# SPEC §8 scale two arenas keep ~15 MB less than the default (docs/performance.md, "B6: glibc's arenas"). Blocks of
# 32 KB and more (likely V8's zone segments, 32 KB at most) that no free arena memory holds are mapped on their own
# and given back when freed, where glibc's default (128 KB) kept them in the arenas: a 200-market watch 106-109 MB in
# six runs instead of 111-145 in ten, §8 scale 204-219 MB after 500 cycles (three runs) instead of 240
# (docs/performance.md, "B6/B6s: malloc's mmap threshold").
ENV LOOKOUT_LISTEN=0.0.0.0:9464 LOOKOUT_DB=/var/lib/lookout/lookout.db MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=32768
EXPOSE 9464
# The probe asks /healthz where LOOKOUT_LISTEN says lookout listens (a wildcard host means loopback; 9464 when unset),
# so overriding LOOKOUT_LISTEN at `docker run` keeps the health check right.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "const l=process.env.LOOKOUT_LISTEN||':9464',i=l.lastIndexOf(':'),h=l.slice(0,i);fetch('http://'+(['','0.0.0.0','::','[::]'].includes(h)?'127.0.0.1':h)+':'+l.slice(i+1)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["run", "-c", "/etc/lookout/config.yaml"]
