# volcano-py: one image for both processes.
#   docker run IMAGE scheduler --scheduler-conf /etc/volcano/volcano-scheduler.conf
#   docker run IMAGE controller
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY volcano_py ./volcano_py
RUN pip install --no-cache-dir --prefix=/install .

FROM python:3.11-slim
# A fixed non-root uid so PodSecurity "restricted" and runAsNonRoot checks pass without extra settings.
RUN useradd --uid 10001 --no-create-home --shell /usr/sbin/nologin volcano
COPY --from=build /install /usr/local
USER 10001
ENV PYTHONUNBUFFERED=1 VOLCANO_PY_LOG_LEVEL=info
EXPOSE 8080 8081 9443
ENTRYPOINT ["volcano-py"]
CMD ["scheduler"]
