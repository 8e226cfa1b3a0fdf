# syntax=docker/dockerfile:1
# The aivyx image: one image for every role (`node app/bin.js worker | gateway | temporal setup | …`),
# built from this checkout. compose.yaml builds it; docs/DEPLOY.md says how it is run.

# Build: every dependency (TypeScript is a devDependency), then the compiled CLI in dist/.
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
# dist/.built is written last, after every source file was copied: app/bin.js then runs dist/ and
# never falls back to tsx. The devDependencies go once the build no longer needs them.
RUN npm run build && npm prune --omit=dev

# Run: the built checkout, as the unprivileged `node` user (uid 1000). The data directory and its
# workspace exist in the image so a fresh named volume mounted on them is owned by that user.
FROM node:20-bookworm-slim
# git for the git tools a host worker runs (the slim image has none); CA certificates for git over https.
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app /app
RUN install -d -o node -g node -m 0700 /var/lib/aivyx /var/lib/aivyx/workspace
ENV AIVYX_HOME=/var/lib/aivyx
USER node
CMD ["node", "app/bin.js", "--help"]
