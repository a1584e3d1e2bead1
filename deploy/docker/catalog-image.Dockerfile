# An image of your own tools: the toolgate image plus your catalog module (deploy/docker/README.md).
# The build context is the directory that holds the catalog; for the example here, from the
# repository root:
#   docker build -f deploy/docker/catalog-image.Dockerfile -t my-toolgate:1 deploy/docker/catalog-example
# Your own: copy this file beside my-tools.ts and run `docker build -t my-toolgate:1 .` there.

# The toolgate image (deploy/docker/Dockerfile), or wherever your registry keeps it.
ARG TOOLGATE_IMAGE=toolgate:0.1.0
FROM ${TOOLGATE_IMAGE}
# Inside /app, so `import ... from 'toolgate'` resolves to the image's own build, and zod and the
# other dependencies to its node_modules. Root-owned and read-only to the service's user.
COPY my-tools.ts /app/catalog/my-tools.ts
# The executor with your tools; configuration from the environment, as for the plain image.
# SIGTERM reaches node directly (exec form, the toolgate bin execs node): running calls finish.
ENTRYPOINT ["toolgate", "executor", "--catalog", "/app/catalog/my-tools.ts"]
CMD []
