#!/bin/sh
# The database roles of compose.yaml, created once by the postgres image on its first start with an empty volume
# (/docker-entrypoint-initdb.d). toolgate_owner owns the database and its tables and is used only by migrations;
# toolgate_app is what the app connects as: it owns nothing, and migrations grant it what it needs.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v owner_password="$TOOLGATE_OWNER_PASSWORD" -v app_password="$TOOLGATE_APP_PASSWORD" <<'SQL'
CREATE ROLE toolgate_owner LOGIN PASSWORD :'owner_password';
CREATE ROLE toolgate_app LOGIN PASSWORD :'app_password';
CREATE DATABASE toolgate OWNER toolgate_owner;
REVOKE ALL ON DATABASE toolgate FROM PUBLIC;
GRANT CONNECT ON DATABASE toolgate TO toolgate_app;
SQL
