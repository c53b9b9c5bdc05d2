# syntax=docker/dockerfile:1
# lookout: build with dev dependencies, run with production dependencies only, as a non-root user.

FROM node:22-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 builds from source when no prebuilt binary is reachable.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json config.example.yaml lookout.schema.json ./
COPY rules ./rules
RUN mkdir -p /var/lib/lookout /etc/lookout && chown -R node:node /var/lib/lookout
USER node
# The DB lives on a volume; mount the config at /etc/lookout/config.yaml and pass secrets as env
# (DATA_API_KEY, SLACK_WEBHOOK_URL, SMTP_PASS, ...). Inside the container the server listens on 0.0.0.0.
VOLUME ["/var/lib/lookout"]
ENV LOOKOUT_LISTEN=0.0.0.0:9464 LOOKOUT_DB=/var/lib/lookout/lookout.db
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:9464/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["run", "-c", "/etc/lookout/config.yaml"]
