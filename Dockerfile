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
ENV LOOKOUT_LISTEN=0.0.0.0:9464 LOOKOUT_DB=/var/lib/lookout/lookout.db
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:9464/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["run", "-c", "/etc/lookout/config.yaml"]
