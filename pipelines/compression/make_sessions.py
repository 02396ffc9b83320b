#!/usr/bin/env python3
"""Writes sessions.jsonl: three realistic agent sessions (debugging, feature, review) as checkpoint records.

The sessions are assembled from hand-written building blocks (user turns, tool calls with their results,
decisions with alternatives, test runs, to-do lists); the output is deterministic. Run it from anywhere:
    python3 pipelines/compression/make_sessions.py
It is not needed to build or test evalgraph; sessions.jsonl is committed.
"""
import json
import os


class Session:
    def __init__(self, sid, task, title):
        self.sid, self.task, self.title = sid, task, title
        self.msgs = []
        self.n = 0

    def user(self, text):
        self.msgs.append({"role": "user", "content": text})

    def say(self, text):
        self.msgs.append({"role": "assistant", "content": text})

    def call(self, text, name, args, result, exit_code=None, error=False):
        self.n += 1
        cid = "call_%s_%03d" % (self.sid.split("-")[0], self.n)
        self.msgs.append({"role": "assistant", "content": text,
                          "tool_calls": [{"id": cid, "name": name, "arguments": args}]})
        r = {"role": "tool", "tool_call_id": cid, "name": name, "content": result}
        if exit_code is not None:
            r["exit_code"] = exit_code
        if error:
            r["is_error"] = True
        self.msgs.append(r)

    def read(self, path, content, text=""):
        self.call(text, "read_file", {"path": path}, content)

    def run(self, cmd, out, code=0, text=""):
        self.call(text, "run_command", {"command": cmd}, out, exit_code=code)

    def edit(self, path, old, new, text="", desc=None):
        args = {"path": path, "old_str": old, "new_str": new}
        self.call(text, "edit_file", args, "The file %s has been edited." % path)

    def create(self, path, content, text=""):
        self.call(text, "create_file", {"path": path, "content": content}, "File created: %s" % path)

    def grep(self, pattern, path, out, text=""):
        self.call(text, "search", {"pattern": pattern, "path": path}, out)

    def todos(self, items, text="Updating the task list."):
        self.call(text, "todo_write", {"todos": [{"content": c, "status": s} for c, s in items]}, "Todos updated.")

    def records(self, parts=4):
        n = len(self.msgs)
        cuts = [round(n * k / parts) for k in range(1, parts + 1)]
        # Never cut between a tool call and its result.
        fixed = []
        for c in cuts:
            while c < n and self.msgs[c]["role"] == "tool":
                c += 1
            fixed.append(c)
        out, start = [], 0
        for i, c in enumerate(fixed):
            if c <= start:
                continue
            out.append({"session_id": self.sid, "checkpoint": i + 1, "task": self.task, "title": self.title,
                        "messages": self.msgs[start:c]})
            start = c
        return out


def debugging():
    s = Session("dbg-auth-jwt", "debugging", "auth-service answers 500 on every login after the dependency upgrade")
    s.user("Since we merged the dependency upgrade (PR #311) the auth service answers 500 on every POST /api/v1/login. "
           "Staging is down for the QA team. Can you find out why and fix it? Don't touch the public API.")
    s.say("I'll reproduce it first with the login tests, then look at the token code.")
    s.run("cd services/auth && pytest tests/test_login.py -q",
          "F.F\n=================================== FAILURES ===================================\n"
          "____________________________ test_login_valid_user ____________________________\n"
          "services/auth/app/tokens.py:41: in issue_token\n    return jwt.encode(payload, settings.JWT_SECRET, algorithm='HS256').decode('utf-8')\n"
          "E   AttributeError: 'str' object has no attribute 'decode'\n"
          "FAILED tests/test_login.py::test_login_valid_user - AttributeError: 'str' object has no attribute 'decode'\n"
          "FAILED tests/test_login.py::test_login_refresh - AttributeError: 'str' object has no attribute 'decode'\n"
          "2 failed, 1 passed in 0.84s", 1,
          "Running the login tests.")
    s.say("Both failures come from `issue_token` in services/auth/app/tokens.py: `jwt.encode(...)` returns a str, and the "
          "code calls `.decode('utf-8')` on it. That is the PyJWT 2.x behaviour; 1.x returned bytes.")
    s.read("services/auth/requirements.txt", "fastapi==0.95.2\nuvicorn==0.22.0\nPyJWT==2.8.0\npasslib[bcrypt]==1.7.4\nredis==4.5.5\n",
           "Checking which PyJWT version the upgrade brought in.")
    s.run("cd services/auth && git log -p -1 --stat -- requirements.txt",
          "commit 9f2c1ab (PR #311)\n    chore(deps): bump all minor and major versions\n requirements.txt | 6 +++---\n"
          "-PyJWT==1.7.1\n+PyJWT==2.8.0\n-redis==3.5.3\n+redis==4.5.5", 0)
    s.read("services/auth/app/tokens.py",
           "import datetime\nimport jwt\nfrom .settings import settings\n\n"
           "def issue_token(user_id: str, scopes: list[str]) -> str:\n    now = datetime.datetime.utcnow()\n"
           "    payload = {'sub': user_id, 'scopes': scopes, 'iat': now, 'exp': now + settings.TOKEN_TTL}\n"
           "    return jwt.encode(payload, settings.JWT_SECRET, algorithm='HS256').decode('utf-8')\n\n"
           "def verify_token(token: str) -> dict:\n    try:\n        return jwt.decode(token, settings.JWT_SECRET)\n"
           "    except jwt.ExpiredSignature:\n        raise TokenExpired()\n")
    s.say("There are three PyJWT 1.x idioms in tokens.py: `.decode('utf-8')` after encode, `jwt.decode` without "
          "`algorithms=`, and `jwt.ExpiredSignature`, which 2.x removed in favour of `jwt.ExpiredSignatureError`.")
    s.grep("jwt\\.", "services/", "services/auth/app/tokens.py:41\nservices/auth/app/tokens.py:45\nservices/auth/app/tokens.py:46\n"
           "services/auth/app/middleware.py:18\nservices/auth/app/middleware.py:22\nservices/billing/app/webhooks.py:7",
           "Looking for every other use of the jwt module.")
    s.read("services/auth/app/middleware.py",
           "import jwt\nfrom starlette.middleware.base import BaseHTTPMiddleware\n...\n"
           "        claims = jwt.decode(token, verify=False)\n        request.state.user = claims['sub']\n...\n"
           "        except jwt.DecodeError:\n            return JSONResponse({'error': 'invalid token'}, 401)\n")
    s.read("services/billing/app/webhooks.py",
           "import hmac\nimport jwt  # unused since the Stripe migration\n...")
    s.user("What are our options? I'd rather not be stuck on an old PyJWT.")
    s.say("Two options:\n1. Pin PyJWT==1.7.1 again. One-line fix, but 1.7.1 is unmaintained and misses the fix for "
          "CVE-2022-29217 (algorithm confusion), and the other bumped packages already expect 2.x in their extras.\n"
          "2. Migrate our code to the 2.x API: drop `.decode()`, pass `algorithms=['HS256']` to every decode, use "
          "`ExpiredSignatureError`, and replace `verify=False` with `options={'verify_signature': False}`. Four call "
          "sites, all in services/auth.\nI recommend option 2: the change is small and keeps us on a maintained, "
          "patched release. Pinning would only postpone the same work.")
    s.user("Agreed, go with the migration. Keep the pin as a fallback only if the migration gets hairy.")
    s.todos([("Migrate tokens.py to the PyJWT 2.x API", "in_progress"),
             ("Migrate middleware.py decode call", "pending"),
             ("Add a regression test for expired tokens", "pending"),
             ("Run the whole auth test suite", "pending"),
             ("Note the migration in CHANGELOG.md", "pending")])
    s.edit("services/auth/app/tokens.py",
           "    return jwt.encode(payload, settings.JWT_SECRET, algorithm='HS256').decode('utf-8')",
           "    return jwt.encode(payload, settings.JWT_SECRET, algorithm='HS256')",
           "PyJWT 2 returns str from encode, so the decode call goes.")
    s.edit("services/auth/app/tokens.py", "        return jwt.decode(token, settings.JWT_SECRET)",
           "        return jwt.decode(token, settings.JWT_SECRET, algorithms=['HS256'])",
           "decode must name the accepted algorithms in 2.x (this is also what closes the algorithm-confusion hole).")
    s.edit("services/auth/app/tokens.py", "    except jwt.ExpiredSignature:", "    except jwt.ExpiredSignatureError:")
    s.run("cd services/auth && pytest tests/test_login.py -q",
          "...\n3 passed in 0.61s", 0, "Re-running the login tests.")
    s.say("The login tests pass. Now the middleware.")
    s.edit("services/auth/app/middleware.py", "        claims = jwt.decode(token, verify=False)",
           "        claims = jwt.decode(token, options={'verify_signature': False}, algorithms=['HS256'])",
           "`verify=False` is gone in 2.x; the equivalent is options={'verify_signature': False}.")
    s.todos([("Migrate tokens.py to the PyJWT 2.x API", "completed"),
             ("Migrate middleware.py decode call", "completed"),
             ("Add a regression test for expired tokens", "in_progress"),
             ("Run the whole auth test suite", "pending"),
             ("Note the migration in CHANGELOG.md", "pending")])
    s.read("services/auth/tests/conftest.py",
           "import pytest\nfrom fastapi.testclient import TestClient\nfrom app.main import app\n\n"
           "@pytest.fixture\ndef client():\n    return TestClient(app)\n\n@pytest.fixture\ndef frozen_time(monkeypatch): ...\n")
    s.create("services/auth/tests/test_tokens.py",
             "import datetime\nimport pytest\nfrom app import tokens\nfrom app.errors import TokenExpired\n\n"
             "def test_issue_returns_str():\n    assert isinstance(tokens.issue_token('u1', ['read']), str)\n\n"
             "def test_expired_token_raises(frozen_time):\n    t = tokens.issue_token('u1', ['read'])\n"
             "    frozen_time.advance(datetime.timedelta(hours=2))\n    with pytest.raises(TokenExpired):\n"
             "        tokens.verify_token(t)\n\ndef test_rejects_none_algorithm():\n"
             "    forged = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1MSJ9.'\n    with pytest.raises(Exception):\n        tokens.verify_token(forged)\n",
             "Adding regression tests: str return type, expired tokens, and the 'none' algorithm being rejected.")
    s.run("cd services/auth && pytest tests/test_tokens.py -q",
          "..F\n=================================== FAILURES ===================================\n"
          "__________________________ test_expired_token_raises ___________________________\n"
          "E   fixture 'frozen_time' has no attribute 'advance'\n"
          "FAILED tests/test_tokens.py::test_expired_token_raises - AttributeError: 'MonkeyPatch' object has no attribute 'advance'\n"
          "1 failed, 2 passed in 0.42s", 1)
    s.say("The frozen_time fixture in conftest.py is only a stub. Rather than write a clock fake, I'll use freezegun, "
          "which the billing service already uses (services/billing/requirements-dev.txt pins freezegun==1.2.2).")
    s.read("services/billing/requirements-dev.txt", "pytest==7.3.1\nfreezegun==1.2.2\nrespx==0.20.1\n")
    s.read("services/auth/requirements-dev.txt", "pytest==7.3.1\nhttpx==0.24.1\n")
    s.edit("services/auth/requirements-dev.txt", "httpx==0.24.1", "httpx==0.24.1\nfreezegun==1.2.2")
    s.edit("services/auth/tests/test_tokens.py",
           "def test_expired_token_raises(frozen_time):\n    t = tokens.issue_token('u1', ['read'])\n    frozen_time.advance(datetime.timedelta(hours=2))",
           "def test_expired_token_raises():\n    with freeze_time('2024-03-01 12:00:00') as clock:\n        t = tokens.issue_token('u1', ['read'])\n        clock.tick(datetime.timedelta(hours=2))",
           "Switching the test to freezegun.")
    s.run("cd services/auth && pip install -r requirements-dev.txt -q && pytest tests/test_tokens.py -q",
          "...\n3 passed in 0.47s", 0)
    s.run("cd services/auth && pytest -q",
          "........F......\n=================================== FAILURES ===================================\n"
          "____________________________ test_refresh_rotates ______________________________\n"
          "services/auth/app/refresh.py:29: in rotate\n    old = redis_client.get(key).decode()\n"
          "E   AttributeError: 'str' object has no attribute 'decode'\n"
          "FAILED tests/test_refresh.py::test_refresh_rotates - AttributeError: 'str' object has no attribute 'decode'\n"
          "1 failed, 14 passed in 2.10s", 1, "Running the whole auth suite now.")
    s.say("One more failure, a different cause: the same upgrade moved redis from 3.5.3 to 4.5.5, and our client is "
          "created with decode_responses=True in 4.x style config, so `get()` already returns str.")
    s.read("services/auth/app/refresh.py",
           "from .cache import redis_client\n...\ndef rotate(key: str, new_token: str) -> str:\n"
           "    old = redis_client.get(key).decode()\n    redis_client.set(key, new_token, ex=settings.REFRESH_TTL)\n    return old\n")
    s.read("services/auth/app/cache.py",
           "import redis\nfrom .settings import settings\n\nredis_client = redis.Redis.from_url(settings.REDIS_URL, decode_responses=True)\n")
    s.user("Careful with redis: the session service shares that cache. Don't change the client config.")
    s.say("Understood. I will not touch cache.py; the fix belongs in refresh.py, which assumed bytes. Alternatives were "
          "to set decode_responses=False (would break the session service, which reads str) or to decode defensively "
          "with isinstance checks; since the client is configured for str, dropping `.decode()` is the honest fix.")
    s.edit("services/auth/app/refresh.py", "    old = redis_client.get(key).decode()", "    old = redis_client.get(key)")
    s.run("cd services/auth && pytest -q", "...............\n15 passed in 2.02s", 0)
    s.todos([("Migrate tokens.py to the PyJWT 2.x API", "completed"),
             ("Migrate middleware.py decode call", "completed"),
             ("Add a regression test for expired tokens", "completed"),
             ("Run the whole auth test suite", "completed"),
             ("Fix refresh.py after the redis 4 upgrade", "completed"),
             ("Check services/billing for PyJWT 1.x usage", "pending"),
             ("Note the migration in CHANGELOG.md", "pending")])
    s.user("Nice. Billing still imports jwt — is it affected?")
    s.read("services/billing/app/webhooks.py",
           "import hmac\nimport hashlib\nimport jwt  # unused since the Stripe migration\n\n"
           "def verify_signature(payload: bytes, header: str, secret: str) -> bool:\n"
           "    digest = hmac.new(secret.encode(), payload, hashlib.sha256).hexdigest()\n    return hmac.compare_digest(digest, header)\n")
    s.say("Billing only imports jwt and never calls it. Removing the unused import is safer than leaving a dependency "
          "that could break on the next bump.")
    s.edit("services/billing/app/webhooks.py", "import jwt  # unused since the Stripe migration\n", "")
    s.run("cd services/billing && pytest -q", "..........\n10 passed in 1.31s", 0)
    s.run("cd services/auth && ruff check app tests",
          "app/tokens.py:1:8: F401 `datetime` imported but unused\nFound 1 error.", 1)
    s.read("services/auth/app/tokens.py",
           "import datetime\nimport jwt\nfrom .settings import settings\nfrom .errors import TokenExpired\n\n"
           "def issue_token(user_id: str, scopes: list[str]) -> str:\n    now = settings.clock()\n...")
    s.edit("services/auth/app/tokens.py", "import datetime\nimport jwt", "import jwt")
    s.run("cd services/auth && ruff check app tests", "All checks passed!", 0)
    s.read("CHANGELOG.md", "# Changelog\n\n## Unreleased\n\n### Changed\n- Dependency upgrade (PR #311)\n")
    s.user("Before the changelog: QA says login works on staging now, but refresh tokens issued before the deploy are "
           "rejected with 401. Is that expected?")
    s.say("Let me check what a pre-deploy token looks like.")
    s.run("cd services/auth && python scripts/decode_token.py --file /tmp/qa_refresh_token.txt",
          "header: {\"alg\": \"HS256\", \"typ\": \"JWT\"}\npayload: {\"sub\": \"qa-17\", \"scopes\": \"read write\", \"exp\": 1711962000}\n"
          "jwt.exceptions.InvalidTokenError: scopes must be a list", 1)
    s.say("Old tokens carry `scopes` as a space-separated string, new ones as a list; our validator in "
          "services/auth/app/claims.py now rejects the string form. Options: (a) accept both forms for one refresh TTL "
          "(14 days) and log a deprecation warning, (b) force everyone to log in again. (a) avoids logging out every "
          "user; the compatibility code can be deleted after 2024-04-15.")
    s.user("Go with (a), and put a TODO with the removal date in the code.")
    s.read("services/auth/app/claims.py",
           "def parse_scopes(claims: dict) -> list[str]:\n    scopes = claims.get('scopes')\n"
           "    if not isinstance(scopes, list):\n        raise InvalidTokenError('scopes must be a list')\n    return scopes\n")
    s.edit("services/auth/app/claims.py",
           "    if not isinstance(scopes, list):\n        raise InvalidTokenError('scopes must be a list')",
           "    if isinstance(scopes, str):  # TODO(2024-04-15): drop legacy space-separated scopes\n"
           "        log.warning('legacy scopes claim for sub=%s', claims.get('sub'))\n        scopes = scopes.split()\n"
           "    if not isinstance(scopes, list):\n        raise InvalidTokenError('scopes must be a list')")
    s.create("services/auth/tests/test_claims.py",
             "from app.claims import parse_scopes\n\ndef test_legacy_string_scopes():\n"
             "    assert parse_scopes({'sub': 'u', 'scopes': 'read write'}) == ['read', 'write']\n\n"
             "def test_list_scopes():\n    assert parse_scopes({'sub': 'u', 'scopes': ['read']}) == ['read']\n")
    s.run("cd services/auth && pytest -q",
          ".................F\n=================================== FAILURES ===================================\n"
          "__________________________ test_legacy_string_scopes __________________________\n"
          "E   NameError: name 'log' is not defined\n"
          "FAILED tests/test_claims.py::test_legacy_string_scopes - NameError: name 'log' is not defined\n"
          "1 failed, 16 passed in 2.20s", 1)
    s.say("claims.py has no logger yet; the other modules use `log = logging.getLogger(__name__)`.")
    s.edit("services/auth/app/claims.py", "from jwt import InvalidTokenError",
           "import logging\nfrom jwt import InvalidTokenError\n\nlog = logging.getLogger(__name__)")
    s.todos([("Check services/billing for PyJWT 1.x usage", "completed"),
             ("Accept legacy string scopes until 2024-04-15", "in_progress"),
             ("Re-run the auth suite after the claims change", "pending"),
             ("Note the migration in CHANGELOG.md", "pending"),
             ("Ask QA to retest refresh on staging", "pending")])
    for i, (mod, out) in enumerate([("app.claims", "ok"), ("app.tokens", "ok"), ("app.refresh", "ok")]):
        s.run("cd services/auth && python -c 'import %s'" % mod, out, 0, "Smoke-importing %s." % mod if i == 0 else "")
    return s


def feature():
    s = Session("feat-csv-export", "feature", "CSV export for the reports API")
    s.user("Customers want to download reports as CSV. Add GET /api/reports/:id/export?format=csv to the reports API "
           "(src/routes/reports.ts). Some reports have 200k rows. Keep the JSON endpoint unchanged.")
    s.say("I'll look at how reports are loaded and served today.")
    s.read("src/routes/reports.ts",
           "import { Router } from 'express';\nimport { loadReport, streamRows } from '../services/reportService';\n"
           "export const reports = Router();\n\nreports.get('/:id', async (req, res, next) => {\n"
           "  try {\n    const report = await loadReport(req.params.id, req.user);\n    res.json(report);\n"
           "  } catch (e) { next(e); }\n});\n")
    s.read("src/services/reportService.ts",
           "export async function loadReport(id: string, user: User): Promise<Report> { ... }\n"
           "// Async iterator over rows, 1000 per page (keyset pagination on (created_at, id))\n"
           "export async function* streamRows(id: string, user: User): AsyncGenerator<Row[]> { ... }\n")
    s.read("package.json",
           "{\n  \"name\": \"reports-api\",\n  \"scripts\": {\"test\": \"jest\", \"build\": \"tsc -p .\"},\n"
           "  \"dependencies\": {\"express\": \"^4.18.2\", \"pg\": \"^8.11.0\"},\n  \"devDependencies\": {\"jest\": \"^29.5.0\", \"ts-jest\": \"^29.1.0\", \"supertest\": \"^6.3.3\"}\n}\n")
    s.say("Design choice: build the whole CSV in memory with a join, or stream it. A 200k-row report with ~20 columns "
          "is roughly 60 MB as a string plus the row objects, and our pods have a 512 MiB limit, so in-memory risks OOM "
          "under concurrency. Streaming rows from `streamRows` through a CSV encoder into the response keeps memory "
          "flat. For the encoder: csv-stringify (mature, handles quoting/BOM, streams) versus hand-written quoting "
          "(no dependency, but RFC 4180 edge cases are easy to get wrong).")
    s.user("Stream it. I'd prefer not to add a dependency unless it really pays off.")
    s.say("Then I'll write a small RFC 4180 encoder (quote fields containing comma, quote, CR or LF; double the "
          "quotes) and test its edge cases thoroughly; it is about 30 lines. If the tests show more edge cases than "
          "expected, csv-stringify stays the fallback.")
    s.todos([("Write src/export/csv.ts (RFC 4180 encoder)", "in_progress"),
             ("Add the export route with streaming", "pending"),
             ("Tests for the encoder and the route", "pending"),
             ("Document the endpoint in docs/api.md", "pending")])
    s.create("src/export/csv.ts",
             "const NEEDS_QUOTES = /[\",\\r\\n]/;\n\nexport function csvField(v: unknown): string {\n"
             "  if (v === null || v === undefined) return '';\n  const s = v instanceof Date ? v.toISOString() : String(v);\n"
             "  return NEEDS_QUOTES.test(s) ? '\"' + s.replace(/\"/g, '\"\"') + '\"' : s;\n}\n\n"
             "export function csvLine(values: unknown[]): string {\n  return values.map(csvField).join(',') + '\\r\\n';\n}\n")
    s.create("src/export/csv.test.ts",
             "import { csvField, csvLine } from './csv';\n\ndescribe('csvField', () => {\n"
             "  it('leaves plain text alone', () => expect(csvField('abc')).toBe('abc'));\n"
             "  it('quotes commas', () => expect(csvField('a,b')).toBe('\"a,b\"'));\n"
             "  it('escapes quotes in cells', () => expect(csvField('say \"hi\"')).toBe('\"say \"\"hi\"\"\"'));\n"
             "  it('quotes newlines', () => expect(csvField('a\\nb')).toBe('\"a\\nb\"'));\n"
             "  it('renders null as empty', () => expect(csvField(null)).toBe(''));\n});\n")
    s.run("npx jest src/export/csv.test.ts",
          "PASS src/export/csv.test.ts\n  csvField\n    ✓ leaves plain text alone (2 ms)\n    ✓ quotes commas\n"
          "    ✓ escapes quotes in cells\n    ✓ quotes newlines\n    ✓ renders null as empty\n\nTests: 5 passed, 5 total", 0)
    s.say("Encoder works. Now the route. `streamRows` yields pages; I'll write the header from the report's column "
          "definitions, then each page, and respect backpressure via `res.write` returning false.")
    s.read("src/types/report.ts",
           "export interface Column { key: string; label: string; type: 'string'|'number'|'date' }\n"
           "export interface Report { id: string; title: string; columns: Column[]; rows?: Row[] }\nexport type Row = Record<string, unknown>;\n")
    s.edit("src/routes/reports.ts", "export const reports = Router();",
           "import { once } from 'events';\nimport { csvLine } from '../export/csv';\n\nexport const reports = Router();\n\n"
           "reports.get('/:id/export', async (req, res, next) => {\n  if (req.query.format !== 'csv') return res.status(400).json({ error: 'format must be csv' });\n"
           "  try {\n    const report = await loadReport(req.params.id, req.user);\n"
           "    res.setHeader('Content-Type', 'text/csv; charset=utf-8');\n"
           "    res.setHeader('Content-Disposition', `attachment; filename=\"${report.title}.csv\"`);\n"
           "    res.write(csvLine(report.columns.map(c => c.label)));\n"
           "    for await (const page of streamRows(report.id, req.user)) {\n"
           "      for (const row of page) {\n        if (!res.write(csvLine(report.columns.map(c => row[c.key])))) await once(res, 'drain');\n      }\n    }\n"
           "    res.end();\n  } catch (e) { next(e); }\n});",
           "Adding the export route before the JSON route so ':id/export' is matched first.")
    s.create("src/routes/reports.export.test.ts",
             "import request from 'supertest';\nimport { app } from '../app';\nimport { seedReport } from '../../test/fixtures';\n\n"
             "describe('GET /api/reports/:id/export', () => {\n"
             "  it('streams the report as CSV', async () => {\n    const id = await seedReport({ rows: 2500 });\n"
             "    const res = await request(app).get(`/api/reports/${id}/export?format=csv`).set('Authorization', 'Bearer test');\n"
             "    expect(res.status).toBe(200);\n    expect(res.text.split('\\r\\n')).toHaveLength(2502);\n  });\n"
             "  it('rejects other formats', async () => {\n    const res = await request(app).get('/api/reports/r1/export?format=xlsx').set('Authorization', 'Bearer test');\n"
             "    expect(res.status).toBe(400);\n  });\n"
             "  it('sets a safe filename for non-ASCII titles', async () => {\n    const id = await seedReport({ title: 'Umsätze Q1/2024' });\n"
             "    const res = await request(app).get(`/api/reports/${id}/export?format=csv`).set('Authorization', 'Bearer test');\n"
             "    expect(res.headers['content-disposition']).toBe(\"attachment; filename=\\\"Umsaetze Q1-2024.csv\\\"; filename*=UTF-8''Ums%C3%A4tze%20Q1%2F2024.csv\");\n  });\n});\n")
    s.run("npx jest src/routes",
          "FAIL src/routes/reports.export.test.ts\n  GET /api/reports/:id/export\n    ✕ streams the report as CSV (412 ms)\n"
          "    ✓ rejects other formats (35 ms)\n    ✕ sets a safe filename for non-ASCII titles (40 ms)\n\n"
          "  ● GET /api/reports/:id/export › streams the report as CSV\n\n"
          "    TypeError: Cannot read properties of undefined (reading 'map')\n\n"
          "      at src/routes/reports.ts:19:38\n\n"
          "  ● GET /api/reports/:id/export › sets a safe filename for non-ASCII titles\n\n"
          "    TypeError [ERR_INVALID_CHAR]: Invalid character in header content [\"Content-Disposition\"]\n\n"
          "Tests: 2 failed, 1 passed, 3 total", 1)
    s.say("Two separate problems. First, `report.columns` is undefined: `loadReport` only fills columns when called "
          "with `{ withColumns: true }`. Second, Node refuses the raw 'ä' in a header; the filename needs an ASCII "
          "fallback plus RFC 5987 `filename*=`.")
    s.read("src/services/reportService.ts",
           "export async function loadReport(id: string, user: User, opts: { withColumns?: boolean } = {}): Promise<Report> {\n"
           "  const report = await db.reports.findVisible(id, user);\n  if (!report) throw new NotFound(`report ${id}`);\n"
           "  if (opts.withColumns) report.columns = await db.reportColumns.forReport(id);\n  return report;\n}\n")
    s.edit("src/routes/reports.ts", "    const report = await loadReport(req.params.id, req.user);\n    res.setHeader('Content-Type'",
           "    const report = await loadReport(req.params.id, req.user, { withColumns: true });\n    res.setHeader('Content-Type'")
    s.create("src/export/filename.ts",
             "const MAP: Record<string, string> = { 'ä': 'ae', 'ö': 'oe', 'ü': 'ue', 'Ä': 'Ae', 'Ö': 'Oe', 'Ü': 'Ue', 'ß': 'ss' };\n\n"
             "export function contentDisposition(title: string): string {\n"
             "  const ascii = title.replace(/[äöüÄÖÜß]/g, c => MAP[c]).replace(/[\\/\\\\]/g, '-').replace(/[^\\x20-\\x7e]/g, '_');\n"
             "  return `attachment; filename=\"${ascii}.csv\"; filename*=UTF-8''${encodeURIComponent(title + '.csv')}`;\n}\n")
    s.edit("src/routes/reports.ts",
           "    res.setHeader('Content-Disposition', `attachment; filename=\"${report.title}.csv\"`);",
           "    res.setHeader('Content-Disposition', contentDisposition(report.title));")
    s.edit("src/routes/reports.ts", "import { csvLine } from '../export/csv';",
           "import { csvLine } from '../export/csv';\nimport { contentDisposition } from '../export/filename';")
    s.run("npx jest src/routes",
          "PASS src/routes/reports.export.test.ts\n  GET /api/reports/:id/export\n    ✓ streams the report as CSV (398 ms)\n"
          "    ✓ rejects other formats (31 ms)\n    ✓ sets a safe filename for non-ASCII titles (37 ms)\n\nTests: 3 passed, 3 total", 0)
    s.todos([("Write src/export/csv.ts (RFC 4180 encoder)", "completed"),
             ("Add the export route with streaming", "completed"),
             ("Tests for the encoder and the route", "completed"),
             ("Check memory on a 200k-row report", "in_progress"),
             ("Excel compatibility (BOM, separator)", "pending"),
             ("Document the endpoint in docs/api.md", "pending")])
    s.user("Can you check memory on a big report? Use report r-200k in the local seed.")
    s.run("node scripts/seed.js --report r-200k --rows 200000", "seeded report r-200k with 200000 rows (21 columns)", 0)
    s.run("node --max-old-space-size=256 scripts/measure-export.js r-200k",
          "rows=200000 bytes=63,412,877 duration=9.8s rss_peak=148MB heap_peak=61MB", 0)
    s.say("Peak RSS stays at 148 MB for 63 MB of CSV under a 256 MB heap cap, so streaming works as intended. "
          "Duration 9.8 s is dominated by the keyset pagination (1000 rows per page).")
    s.user("Product says most customers open these in Excel on Windows, and umlauts come out garbled.")
    s.say("Excel assumes a legacy code page for CSV without a BOM. Options: (1) prepend a UTF-8 BOM, which Excel "
          "recognises and other tools ignore or strip; (2) offer `format=xlsx` via a spreadsheet library, which is a "
          "new dependency and non-streaming in most libraries; (3) UTF-16LE with tabs, Excel-friendly but surprising "
          "for scripts. I suggest (1) behind `?bom=1`, defaulting to on for now, since it is one line and reversible.")
    s.user("Do the BOM, default on. xlsx can be a follow-up ticket.")
    s.edit("src/routes/reports.ts", "    res.write(csvLine(report.columns.map(c => c.label)));",
           "    if (req.query.bom !== '0') res.write('\\ufeff');\n    res.write(csvLine(report.columns.map(c => c.label)));")
    s.edit("src/routes/reports.export.test.ts", "    expect(res.text.split('\\r\\n')).toHaveLength(2502);",
           "    expect(res.text.charCodeAt(0)).toBe(0xfeff);\n    expect(res.text.split('\\r\\n')).toHaveLength(2502);")
    s.run("npx jest",
          "PASS src/export/csv.test.ts\nPASS src/routes/reports.export.test.ts\nFAIL src/routes/reports.test.ts\n"
          "  ● GET /api/reports/:id › returns 404 for reports of other tenants\n\n"
          "    expect(received).toBe(expected)\n    Expected: 404\n    Received: 500\n\n"
          "      at src/routes/reports.test.ts:48:24\n\n"
          "Tests: 1 failed, 17 passed, 18 total", 1)
    s.say("An existing test fails: the JSON route now returns 500 for other tenants' reports. My edit of "
          "reportService.ts did not change the JSON route... let me check the error handler.")
    s.read("src/middleware/errors.ts",
           "export function errorHandler(err, req, res, next) {\n  if (err instanceof NotFound) return res.status(404).json({ error: err.message });\n"
           "  res.status(500).json({ error: 'internal' });\n}\n")
    s.grep("class NotFound", "src/", "src/errors.ts:3:export class NotFound extends Error {}\nsrc/services/errors.ts:1:export class NotFound extends Error {}")
    s.say("There are two NotFound classes; reportService imports the one from src/services/errors.ts, the handler "
          "checks src/errors.ts. This predates my change (the test was already failing on main: CI run #2291). I'll "
          "leave it for a separate fix and note it rather than widen this PR.")
    s.run("git stash && npx jest src/routes/reports.test.ts; git stash pop",
          "FAIL src/routes/reports.test.ts\n  ● GET /api/reports/:id › returns 404 for reports of other tenants\n"
          "    Expected: 404\n    Received: 500\nTests: 1 failed, 5 passed, 6 total", 1)
    s.todos([("Check memory on a 200k-row report", "completed"),
             ("Excel compatibility (BOM, separator)", "completed"),
             ("Document the endpoint in docs/api.md", "in_progress"),
             ("File a ticket: duplicate NotFound classes (reports.test.ts 404 test fails on main)", "pending"),
             ("Follow-up ticket: xlsx export", "pending")])
    s.read("docs/api.md", "# Reports API\n\n## GET /api/reports/:id\nReturns the report as JSON.\n")
    s.edit("docs/api.md", "Returns the report as JSON.\n",
           "Returns the report as JSON.\n\n## GET /api/reports/:id/export?format=csv[&bom=0]\n"
           "Streams the report as RFC 4180 CSV (UTF-8, CRLF). A UTF-8 BOM is written first unless `bom=0`.\n"
           "The file name is an ASCII fallback plus `filename*` (RFC 5987).\n")
    s.run("npm run build", "> reports-api@1.4.0 build\n> tsc -p .\n", 0)
    s.run("npx eslint src/export src/routes/reports.ts",
          "src/export/filename.ts\n  1:7  warning  'MAP' should be named in camelCase  @typescript-eslint/naming-convention\n\n✖ 1 problem (0 errors, 1 warning)", 0)
    s.user("Also, the separator: German Excel expects semicolons. Should we switch?")
    s.say("Switching the default would break scripts that parse the CSV. A `sep=;` first line also works in Excel "
          "but pollutes the file for every other consumer. I'd add an explicit `?delimiter=semicolon` option and keep "
          "comma as the default. It needs csvField to know the delimiter, so the quoting rule must include ';' when "
          "it is the separator.")
    s.user("OK, add the option, but it's the last thing for today.")
    s.edit("src/export/csv.ts", "const NEEDS_QUOTES = /[\",\\r\\n]/;\n\nexport function csvField(v: unknown): string {",
           "export function csvField(v: unknown, sep = ','): string {\n  const NEEDS_QUOTES = sep === ';' ? /[\";\\r\\n]/ : /[\",\\r\\n]/;")
    s.run("npx jest src/export",
          "FAIL src/export/csv.test.ts\n  csvLine\n    ✕ joins with the given separator (3 ms)\n\n"
          "  ● csvLine › joins with the given separator\n\n    expect(received).toBe(expected)\n"
          "    Expected: \"a;b\\r\\n\"\n    Received: \"a,b\\r\\n\"\n\nTests: 1 failed, 5 passed, 6 total", 1)
    s.say("csvLine still hard-codes ','. I have not threaded the separator through csvLine and the route yet.")
    s.todos([("Document the endpoint in docs/api.md", "completed"),
             ("Thread the delimiter through csvLine and the export route (?delimiter=semicolon)", "in_progress"),
             ("Make 'csvLine › joins with the given separator' pass", "pending"),
             ("File a ticket: duplicate NotFound classes (reports.test.ts 404 test fails on main)", "pending"),
             ("Follow-up ticket: xlsx export", "pending")])
    return s


def review():
    s = Session("rev-pr482-pool", "review", "Review of PR #482: connection pooling in the payments service")
    s.user("Please review PR #482 (branch feat/db-pool) in the payments service: it replaces per-request Postgres "
           "connections with a pool. Write your findings to REVIEW.md; don't push code changes to the branch.")
    s.run("git fetch origin feat/db-pool && git diff --stat main...origin/feat/db-pool",
          " cmd/payments/main.go          |  14 ++-\n internal/db/pool.go           | 142 +++++++++++\n"
          " internal/db/pool_test.go      |  88 +++++++\n internal/payments/handler.go  |  21 +-\n go.mod                        |   1 +\n"
          " 5 files changed, 255 insertions(+), 11 deletions(-)", 0)
    s.run("git checkout origin/feat/db-pool", "HEAD is now at 4be21c7 db: add connection pool", 0)
    s.read("internal/db/pool.go",
           "package db\n\ntype Pool struct {\n\tmu    sync.Mutex\n\tidle  []*pgx.Conn\n\tmax   int\n\topen  int\n\tdsn   string\n}\n\n"
           "func (p *Pool) Get(ctx context.Context) (*pgx.Conn, error) {\n\tp.mu.Lock()\n\tif n := len(p.idle); n > 0 {\n"
           "\t\tc := p.idle[n-1]\n\t\tp.idle = p.idle[:n-1]\n\t\tp.mu.Unlock()\n\t\treturn c, nil\n\t}\n\tif p.open >= p.max {\n"
           "\t\tp.mu.Unlock()\n\t\treturn nil, ErrPoolExhausted\n\t}\n\tp.mu.Unlock()\n\tp.open++\n\treturn pgx.Connect(ctx, p.dsn)\n}\n\n"
           "func (p *Pool) Put(c *pgx.Conn) {\n\tp.idle = append(p.idle, c)\n}\n")
    s.say("First observations on internal/db/pool.go:\n- `p.open++` happens after `Unlock`: a data race, and the max "
          "can be exceeded under concurrency.\n- `Put` appends to `p.idle` without the mutex: another race.\n- A failed "
          "`pgx.Connect` still counts as open, so the pool leaks capacity on every connection error.\n- Broken "
          "connections are returned to the pool without a health check.\n- When exhausted it fails immediately instead "
          "of waiting with the context's deadline.")
    s.read("internal/db/pool_test.go",
           "func TestPoolReuse(t *testing.T) {\n\tp := NewPool(testDSN, 2)\n\tvar wg sync.WaitGroup\n\tfor i := 0; i < 50; i++ {\n"
           "\t\twg.Add(1)\n\t\tgo func() { defer wg.Done(); c, err := p.Get(ctx); if err == nil { p.Put(c) } }()\n\t}\n\twg.Wait()\n"
           "\tif p.open > 2 { t.Fatalf(\"opened %d connections, max 2\", p.open) }\n}\n")
    s.run("docker compose up -d postgres && go test ./internal/db/... -race -count=1",
          "==================\nWARNING: DATA RACE\nWrite at 0x00c0001b40a8 by goroutine 23:\n  payments/internal/db.(*Pool).Get()\n"
          "      internal/db/pool.go:31 +0x1c4\nPrevious write at 0x00c0001b40a8 by goroutine 19:\n  payments/internal/db.(*Pool).Get()\n"
          "      internal/db/pool.go:31 +0x1c4\n==================\n--- FAIL: TestPoolReuse (0.31s)\n    pool_test.go:19: opened 4 connections, max 2\n"
          "    testing.go:1446: race detected during execution of test\nFAIL\nFAIL\tpayments/internal/db\t0.412s\nFAIL", 1,
          "Running the pool tests with the race detector.")
    s.say("The race detector confirms the race on `p.open` (pool.go:31), and TestPoolReuse opens 4 connections with "
          "max 2. The PR's own test fails under -race; CI does not run -race, which is why it was green.")
    s.read(".github/workflows/ci.yml", "jobs:\n  test:\n    steps:\n      - run: go test ./...\n")
    s.read("cmd/payments/main.go",
           "func main() {\n\tcfg := config.Load()\n\tpool := db.NewPool(cfg.DatabaseURL, 10)\n\th := payments.NewHandler(pool)\n"
           "\thttp.ListenAndServe(cfg.Addr, h)\n}\n")
    s.read("internal/payments/handler.go",
           "func (h *Handler) Charge(w http.ResponseWriter, r *http.Request) {\n\tconn, err := h.pool.Get(r.Context())\n"
           "\tif err != nil { http.Error(w, err.Error(), 503); return }\n\tdefer h.pool.Put(conn)\n\ttx, err := conn.Begin(r.Context())\n"
           "\t...\n\tif err := tx.Commit(r.Context()); err != nil {\n\t\thttp.Error(w, \"commit failed\", 500)\n\t\treturn\n\t}\n}\n")
    s.say("handler.go: on a failed commit the connection may be left in an aborted transaction state and is still "
          "`Put` back. The next request on that connection would fail with 'current transaction is aborted'. Also the "
          "pool size 10 is hard-coded in main.go while the config package already reads env vars.")
    s.read("internal/config/config.go",
           "type Config struct {\n\tAddr        string `env:\"PAYMENTS_ADDR\" default:\":8080\"`\n\tDatabaseURL string `env:\"DATABASE_URL\"`\n}\n")
    s.read("go.mod", "module payments\n\ngo 1.21\n\nrequire (\n\tgithub.com/jackc/pgx/v5 v5.4.3\n)\n")
    s.user("Would you recommend fixing the custom pool or using something off the shelf?")
    s.say("Off the shelf: the module already depends on github.com/jackc/pgx/v5, which ships `pgxpool` with health "
          "checks (`HealthCheckPeriod`), `MaxConnLifetime`, context-aware waiting when exhausted, and resetting of "
          "connections after failed transactions. Fixing the custom pool means re-implementing all of that and testing "
          "it. A third option, database/sql with the pgx stdlib driver, also pools, but would force rewriting the "
          "handlers from pgx types to database/sql. I'd recommend pgxpool: smallest diff, best-tested behaviour.")
    s.user("Agreed. Put that as the main recommendation. Also check whether the pool size should come from config.")
    s.create("REVIEW.md",
             "# Review of PR #482 — connection pooling (feat/db-pool @ 4be21c7)\n\n## Summary\n"
             "Request changes. The custom pool has data races and leaks capacity; recommend replacing it with pgxpool.\n\n"
             "## Blocking\n1. Data race on `Pool.open` (pool.go:31, found with `go test -race`); `TestPoolReuse` opens 4 "
             "connections with max 2.\n2. `Put` mutates `idle` without the mutex.\n3. Failed `pgx.Connect` still counts as "
             "open → capacity leak.\n4. Connections in an aborted transaction are returned to the pool (handler.go, commit "
             "failure path).\n\n## Recommendation\nUse `github.com/jackc/pgx/v5/pgxpool` (already a dependency).\n",
             "Writing the first findings to REVIEW.md.")
    s.grep("NewPool(", ".", "cmd/payments/main.go:9:\tpool := db.NewPool(cfg.DatabaseURL, 10)\n"
           "cmd/reconcile/main.go:14:\tpool := db.NewPool(os.Getenv(\"DATABASE_URL\"), 2)\ninternal/db/pool_test.go:4:\tp := NewPool(testDSN, 2)")
    s.read("cmd/reconcile/main.go",
           "func main() {\n\tpool := db.NewPool(os.Getenv(\"DATABASE_URL\"), 2)\n\tdefer pool.Close()\n\tjobs.Reconcile(context.Background(), pool)\n}\n")
    s.run("go build ./...", "# payments/cmd/reconcile\ncmd/reconcile/main.go:15:12: pool.Close undefined (type *db.Pool has no field or method Close)", 1)
    s.say("A second caller, cmd/reconcile, calls `pool.Close()`, which the PR's Pool does not have: the branch does not "
          "even build. CI only builds cmd/payments. Adding this as blocking item 5.")
    s.edit("REVIEW.md", "failure path).\n", "failure path).\n5. `go build ./...` fails: cmd/reconcile/main.go:15 calls "
           "`pool.Close`, which `db.Pool` lacks. CI builds only cmd/payments.\n")
    s.todos([("Blocking issues in pool.go / handler.go", "completed"),
             ("Recommendation: pgxpool", "completed"),
             ("Pool size from config (DB_MAX_CONNS)", "in_progress"),
             ("CI: add -race and build ./...", "pending"),
             ("Benchmark per-request vs pooled latency", "pending"),
             ("Post the review on the PR", "pending")])
    s.say("On the pool size: hard-coding 10 ignores that Postgres max_connections (100 on the prod instance) is shared "
          "by 6 payment replicas and the reconcile job. Options: an env var `DB_MAX_CONNS` in config.Config (consistent "
          "with the other settings) or a `pool_max_conns` parameter in DATABASE_URL, which pgxpool parses itself. The "
          "URL parameter needs no code, but hides the setting in a secret; the env var is visible in the deployment "
          "manifests. I'll suggest the env var, default 10, documented next to DATABASE_URL.")
    s.read("deploy/payments/values.yaml",
           "replicaCount: 6\nenv:\n  DATABASE_URL: {secretKeyRef: payments-db}\n  PAYMENTS_ADDR: \":8080\"\n")
    s.edit("REVIEW.md", "## Recommendation\n",
           "## Non-blocking\n- Pool size is hard-coded (10) in cmd/payments/main.go; with 6 replicas that is 60 of the "
           "instance's 100 connections. Suggest `DB_MAX_CONNS` in internal/config/config.go (default 10), set per "
           "environment in deploy/payments/values.yaml.\n- CI should run `go test -race ./...` and `go build ./...`.\n\n"
           "## Recommendation\n")
    s.user("Can you quantify the benefit? The author claims p99 drops from 180 ms to 20 ms.")
    s.read("internal/payments/bench_test.go",
           "func BenchmarkChargePerRequest(b *testing.B) { ... }\nfunc BenchmarkChargePooled(b *testing.B) { ... }\n")
    s.run("go test ./internal/payments -run '^$' -bench Charge -benchtime 2000x",
          "goos: linux\ngoarch: amd64\nBenchmarkChargePerRequest-8   \t    2000\t   4211873 ns/op\n"
          "BenchmarkChargePooled-8       \t    2000\t    612004 ns/op\nPASS\nok  \tpayments/internal/payments\t9.824s", 0)
    s.say("Locally: 4.2 ms per charge with a new connection per request vs 0.61 ms pooled (against a local Postgres, so "
          "no TLS handshake; in production the gap is larger). This supports pooling in general, not this "
          "implementation; the benchmark uses the racy pool. I have not measured p99 under concurrency yet.")
    s.run("go test ./internal/payments -run '^$' -bench ChargePooled -benchtime 2000x -cpu 16 -race",
          "==================\nWARNING: DATA RACE\n...\n--- FAIL: BenchmarkChargePooled-16\n    testing.go:1446: race detected during execution of test\nFAIL", 1)
    s.say("Under -race with 16 goroutines the pooled benchmark trips the same race, so concurrent numbers for this "
          "pool are not meaningful. A fair p99 comparison needs pgxpool first.")
    s.edit("REVIEW.md", "## Recommendation\n",
           "## Performance\nSequential benchmark (local Postgres, 2000 charges): 4.21 ms/op per-request vs 0.61 ms/op pooled. "
           "A concurrent p99 comparison is still open: the pooled benchmark fails under -race.\n\n## Recommendation\n")
    for f, content in [("internal/db/migrate.go", "func Migrate(ctx context.Context, conn *pgx.Conn) error { ... }\n"),
                       ("internal/payments/refund.go", "func (h *Handler) Refund(w http.ResponseWriter, r *http.Request) {\n\tconn, err := h.pool.Get(r.Context())\n\t...\n\tdefer h.pool.Put(conn)\n"),
                       ("internal/payments/webhook.go", "func (h *Handler) Webhook(...) {\n\tconn, _ := h.pool.Get(r.Context())\n\tdefer h.pool.Put(conn)\n")]:
        s.read(f, content, "Checking the other pool users." if f.endswith("migrate.go") else "")
    s.say("webhook.go ignores the error from `Get` and defers `Put(nil)` on failure: a nil pointer panic when the "
          "pool is exhausted. That is a sixth blocking issue. refund.go handles the error correctly.")
    s.edit("REVIEW.md", "CI builds only cmd/payments.\n",
           "CI builds only cmd/payments.\n6. internal/payments/webhook.go ignores the error of `pool.Get` and defers "
           "`Put(nil)`: panics when the pool is exhausted.\n")
    s.user("Good. One question from the author: they chose a LIFO idle list on purpose. Is that fine?")
    s.say("LIFO is a reasonable choice: it keeps a small hot set of connections and lets the rest age out, which "
          "helps with server-side idle timeouts. FIFO spreads load across all connections and keeps them all warm, "
          "which only matters with per-connection caches. pgxpool also hands out the most recently used idle "
          "connection, so moving to pgxpool keeps that behaviour. I'll note it as 'fine, no change'.")
    s.edit("REVIEW.md", "- CI should run", "- LIFO idle list: fine (keeps a hot set; pgxpool behaves the same).\n- CI should run")
    s.todos([("Pool size from config (DB_MAX_CONNS)", "completed"),
             ("CI: add -race and build ./...", "completed"),
             ("Benchmark per-request vs pooled latency", "completed"),
             ("p99 under concurrency with pgxpool (needs a pgxpool spike branch)", "pending"),
             ("Post the review on the PR", "in_progress")])
    s.run("gh pr review 482 --request-changes --body-file REVIEW.md",
          "error: could not request changes: GraphQL: Review cannot be submitted on a draft pull request (addPullRequestReview)", 1)
    s.say("The PR is still a draft, so GitHub refuses a 'request changes' review. I can post REVIEW.md as a plain "
          "comment now, or wait until the author marks it ready.")
    s.user("Post it as a comment for now; we'll do the formal review when it's ready.")
    s.run("gh pr comment 482 --body-file REVIEW.md", "https://github.com/acme/payments/pull/482#issuecomment-1893301", 0)
    s.todos([("p99 under concurrency with pgxpool (needs a pgxpool spike branch)", "pending"),
             ("Formal 'request changes' review once PR #482 leaves draft", "pending"),
             ("Post the review on the PR", "completed")])
    for i in range(3):
        s.run("gh pr view 482 --json isDraft,reviewDecision", "{\"isDraft\": true, \"reviewDecision\": \"\"}", 0,
              "Checking whether the PR left draft." if i == 0 else "")
    return s


def pad(s, target, fillers):
    """Adds follow-up exploration (each block used once, in order) until the session reaches `target` messages."""
    for kind, args in fillers:
        if len(s.msgs) >= target:
            break
        getattr(s, kind)(*args)
    if len(s.msgs) < target:
        raise SystemExit("%s: not enough filler blocks (%d messages)" % (s.sid, len(s.msgs)))


def reads(paths, what):
    """Reads of related files: (path, first lines) pairs, with a short note of what the agent looks for."""
    return [("read", (p, c, what if i == 0 else "")) for i, (p, c) in enumerate(paths)]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    dbg, feat, rev = debugging(), feature(), review()
    pad(dbg, 160, reads([
        ("services/auth/app/errors.py", "class TokenExpired(Exception): ...\nclass TokenInvalid(Exception): ...\n"),
        ("services/auth/app/routes/login.py", "@router.post('/login')\nasync def login(body: LoginBody):\n    user = await users.authenticate(body.email, body.password)\n    return {'access_token': issue_token(user.id, user.scopes)}\n"),
        ("services/auth/app/routes/refresh.py", "@router.post('/refresh')\nasync def refresh(body: RefreshBody):\n    claims = verify_token(body.refresh_token)\n    scopes = parse_scopes(claims)\n"),
        ("services/auth/app/settings.py", "class Settings(BaseSettings):\n    JWT_SECRET: str\n    TOKEN_TTL: timedelta = timedelta(minutes=30)\n    REFRESH_TTL: int = 1209600\n"),
        ("services/session/app/store.py", "from auth_cache import redis_client  # shared with services/auth\nasync def load(sid: str) -> dict: ...\n"),
        ("services/auth/scripts/decode_token.py", "import argparse, jwt\n# prints header and payload without verifying the signature\n"),
        ("docs/runbooks/auth.md", "# Auth service runbook\n## Rotating JWT_SECRET\n1. Add the new secret as JWT_SECRET_NEXT ...\n"),
        ("services/auth/app/main.py", "app = FastAPI()\napp.add_middleware(JWTMiddleware)\napp.include_router(login.router, prefix='/api/v1')\n"),
        ("services/auth/app/users.py", "async def authenticate(email: str, password: str) -> User:\n    user = await repo.by_email(email)\n    if not pwd.verify(password, user.hash): raise InvalidCredentials()\n"),
        ("services/auth/tests/test_refresh.py", "def test_refresh_rotates(client, redis):\n    r = client.post('/api/v1/refresh', json={'refresh_token': LEGACY})\n    assert r.status_code == 200\n"),
        ("services/auth/Dockerfile", "FROM python:3.11-slim\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\nCMD [\"uvicorn\", \"app.main:app\"]\n"),
        ("services/auth/app/logging.yaml", "loggers:\n  app.claims: {level: WARNING}\n"),
        ("services/auth/app/cache.py", "import redis\nfrom .settings import settings\n\nredis_client = redis.Redis.from_url(settings.REDIS_URL, decode_responses=True)\n"),
        ("services/session/requirements.txt", "fastapi==0.95.2\nredis==4.5.5\n"),
        ("deploy/auth/values.yaml", "replicaCount: 3\nenv:\n  JWT_SECRET: {secretKeyRef: auth-jwt}\n  REDIS_URL: redis://cache:6379/0\n"),
        ("services/auth/tests/test_login.py", "def test_login_valid_user(client, user):\n    r = client.post('/api/v1/login', json=user.credentials)\n    assert r.status_code == 200\n"),
    ], "Checking the code paths that touch tokens and scopes once more.") + [
        ("run", ("cd services/auth && pytest tests/test_claims.py -q", "..\n2 passed in 0.18s", 0)),
        ("grep", ("scopes", "services/auth/app", "services/auth/app/claims.py:2\nservices/auth/app/tokens.py:8\nservices/auth/app/routes/login.py:31\nservices/auth/app/routes/refresh.py:12")),
        ("run", ("cd services/auth && pytest -q", ".................\n17 passed in 2.24s", 0)),
        ("run", ("cd services/auth && mypy app", "Success: no issues found in 14 source files", 0)),
        ("grep", ("ExpiredSignature\\b", "services/", "(no matches)")),
        ("run", ("git diff --stat", " CHANGELOG.md | 0\n services/auth/app/claims.py | 7 ++++++-\n services/auth/app/middleware.py | 2 +-\n services/auth/app/refresh.py | 2 +-\n services/auth/app/tokens.py | 7 +++----\n services/auth/requirements-dev.txt | 1 +\n services/billing/app/webhooks.py | 1 -", 0)),
        ("run", ("cd services/auth && docker build -t auth:pyjwt2 .", "Successfully built 3f9a2c71d0be\nSuccessfully tagged auth:pyjwt2", 0)),
        ("run", ("curl -s -X POST localhost:8081/api/v1/login -d '{\"email\":\"qa@example.com\",\"password\":\"***\"}'", "{\"access_token\":\"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9...\"}", 0)),
        ("run", ("curl -s -X POST localhost:8081/api/v1/refresh -d @/tmp/qa_refresh.json", "{\"detail\":\"Internal Server Error\"}", 22)),
        ("say", ("The refresh call against the local container still fails with a 500; I have not looked at its logs yet.",)),
    ])
    pad(feat, 152, reads([
        ("src/app.ts", "import express from 'express';\nimport { reports } from './routes/reports';\nexport const app = express();\napp.use('/api/reports', auth(), reports);\napp.use(errorHandler);\n"),
        ("src/middleware/auth.ts", "export function auth() {\n  return (req, res, next) => { req.user = verifyBearer(req.headers.authorization); next(); };\n}\n"),
        ("src/db/index.ts", "export const db = { reports: new ReportRepo(pool), reportColumns: new ColumnRepo(pool) };\n"),
        ("src/db/reportRepo.ts", "async findVisible(id: string, user: User) {\n  return this.one('SELECT * FROM reports WHERE id = $1 AND tenant_id = $2', [id, user.tenantId]);\n}\n"),
        ("src/db/columnRepo.ts", "async forReport(id: string): Promise<Column[]> {\n  return this.many('SELECT key, label, type FROM report_columns WHERE report_id = $1 ORDER BY position', [id]);\n}\n"),
        ("test/fixtures.ts", "export async function seedReport(opts: { rows?: number; title?: string } = {}) { ... }\n"),
        ("scripts/measure-export.js", "// measures rss/heap peaks while streaming an export to /dev/null\n"),
        ("src/errors.ts", "export class NotFound extends Error {}\nexport class Forbidden extends Error {}\n"),
        ("src/services/errors.ts", "export class NotFound extends Error {}\n"),
        ("tsconfig.json", "{\n  \"compilerOptions\": {\"strict\": true, \"target\": \"ES2022\", \"module\": \"commonjs\"}\n}\n"),
        ("jest.config.js", "module.exports = { preset: 'ts-jest', testEnvironment: 'node', roots: ['<rootDir>/src'] };\n"),
        ("src/routes/index.ts", "export { reports } from './reports';\nexport { health } from './health';\n"),
        ("src/routes/reports.test.ts", "it('returns 404 for reports of other tenants', async () => {\n  const res = await request(app).get('/api/reports/other-tenant').set('Authorization', 'Bearer test');\n  expect(res.status).toBe(404);\n});\n"),
        ("src/services/reportService.ts", "import { NotFound } from './errors';\nexport async function loadReport(id: string, user: User, opts: { withColumns?: boolean } = {}) { ... }\n"),
        ("docs/api.md", "# Reports API\n\n## GET /api/reports/:id\nReturns the report as JSON.\n\n## GET /api/reports/:id/export?format=csv[&bom=0]\n..."),
        ("CHANGELOG.md", "# Changelog\n\n## Unreleased\n- (nothing yet)\n"),
        ("src/export/filename.test.ts", "// (does not exist yet: contentDisposition is only covered through the route test)\n"),
        ("scripts/seed.js", "// node scripts/seed.js --report <id> --rows <n>: inserts a report with generated rows\n"),
        ("src/types/user.ts", "export interface User { id: string; tenantId: string; roles: string[] }\n"),
        ("src/middleware/errors.ts", "import { NotFound } from '../errors';\nexport function errorHandler(err, req, res, next) { ... }\n"),
        ("package-lock.json", "{\n  \"name\": \"reports-api\",\n  \"version\": \"1.4.0\",\n  \"lockfileVersion\": 3, ...\n"),
        ("src/health.ts", "export const health = Router().get('/healthz', (_req, res) => res.send('ok'));\n"),
        ("src/export/csv.test.ts", "describe('csvLine', () => {\n  it('joins with the given separator', () => expect(csvLine(['a', 'b'], ';')).toBe('a;b\\r\\n'));\n});\n"),
    ], "Before threading the separator through, re-reading the code it touches.") + [
        ("grep", ("csvLine(", "src/", "src/export/csv.ts:9\nsrc/routes/reports.ts:21\nsrc/routes/reports.ts:24\nsrc/export/csv.test.ts:12")),
        ("grep", ("NotFound", "src/", "src/errors.ts:1\nsrc/services/errors.ts:1\nsrc/services/reportService.ts:2\nsrc/middleware/errors.ts:1")),
        ("run", ("npx tsc --noEmit", "src/export/csv.ts(4,3): error TS6133: 'NEEDS_QUOTES' is declared but its value is never read.", 2)),
        ("run", ("git log --oneline -5 -- src/services/errors.ts", "a81c0d2 move errors next to the services (#2240)", 0)),
        ("run", ("npx jest src/export", "FAIL src/export/csv.test.ts\n  ✕ joins with the given separator\nTests: 1 failed, 5 passed, 6 total", 1)),
        ("run", ("npx jest src/routes/reports.export.test.ts", "PASS src/routes/reports.export.test.ts\nTests: 3 passed, 3 total", 0)),
        ("run", ("npx eslint src/export", "src/export/csv.ts\n  4:9  error  'NEEDS_QUOTES' is assigned a value but never used  no-unused-vars\n\n✖ 1 problem (1 error, 0 warnings)", 1)),
        ("grep", ("delimiter", "src/ docs/", "(no matches)")),
        ("run", ("git diff src/export/csv.ts", "-const NEEDS_QUOTES = /[\",\\r\\n]/;\n-export function csvField(v: unknown): string {\n+export function csvField(v: unknown, sep = ','): string {\n+  const NEEDS_QUOTES = sep === ';' ? /[\";\\r\\n]/ : /[\",\\r\\n]/;", 0)),
        ("run", ("git status --short", " M docs/api.md\n M src/export/csv.ts\n M src/routes/reports.export.test.ts\n M src/routes/reports.ts\n?? src/export/csv.test.ts\n?? src/export/filename.ts", 0)),
        ("say", ("Stopping here as agreed: csvLine and the route still need the separator parameter, and the tsc error in csv.ts comes from the half-done change.",)),
    ])
    pad(rev, 150, reads([
        ("internal/db/errors.go", "var ErrPoolExhausted = errors.New(\"db: pool exhausted\")\n"),
        ("internal/payments/handler_test.go", "func TestChargeCommitFailure(t *testing.T) { t.Skip(\"flaky, see #455\") }\n"),
        ("internal/jobs/reconcile.go", "func Reconcile(ctx context.Context, pool *db.Pool) error {\n\tconn, err := pool.Get(ctx)\n\t...\n}\n"),
        ("internal/db/tx.go", "func WithTx(ctx context.Context, conn *pgx.Conn, fn func(pgx.Tx) error) error { ... }\n"),
        ("deploy/reconcile/cronjob.yaml", "schedule: \"*/15 * * * *\"\nenv:\n  DATABASE_URL: {secretKeyRef: payments-db}\n"),
        ("docs/adr/0007-postgres-access.md", "# ADR 7: Postgres access\nWe use pgx directly (not database/sql) for COPY and LISTEN/NOTIFY support.\n"),
        ("Makefile", "test:\n\tgo test ./...\nlint:\n\tgolangci-lint run\n"),
        ("internal/payments/refund_test.go", "func TestRefundPoolExhausted(t *testing.T) {\n\tp := db.NewPool(testDSN, 0)\n\t...\n\tassertStatus(t, rec, 503)\n}\n"),
        ("internal/payments/webhook_test.go", "// no test for the pool-exhausted path\nfunc TestWebhookSignature(t *testing.T) { ... }\n"),
        ("internal/db/conn.go", "func Connect(ctx context.Context, dsn string) (*pgx.Conn, error) {\n\treturn pgx.Connect(ctx, dsn)\n}\n"),
        ("internal/config/config_test.go", "func TestLoadDefaults(t *testing.T) {\n\tt.Setenv(\"DATABASE_URL\", \"postgres://localhost/test\")\n\t...\n}\n"),
        ("deploy/payments/values-prod.yaml", "replicaCount: 6\nresources:\n  limits: {memory: 512Mi}\n"),
        ("docs/runbooks/payments-db.md", "# Payments DB runbook\nmax_connections = 100 (prod), shared by payments and reconcile.\n"),
        ("go.sum", "github.com/jackc/pgx/v5 v5.4.3 h1:cxFyXhxlvAifxnkKKdlxv8XqUf59tDlYjnV5YYfsJJY=\n..."),
        (".golangci.yml", "linters:\n  enable: [staticcheck, govet, errcheck]\n"),
        ("internal/payments/charge.go", "func (h *Handler) charge(ctx context.Context, tx pgx.Tx, req ChargeRequest) error { ... }\n"),
        ("internal/payments/handler_charge_test.go", "func TestChargeHappyPath(t *testing.T) { ... }\n"),
        ("internal/db/pool_bench_test.go", "func BenchmarkPoolGetPut(b *testing.B) { ... }\n"),
        ("cmd/payments/flags.go", "var addr = flag.String(\"addr\", \":8080\", \"listen address\")\n"),
        ("internal/payments/idempotency.go", "func (h *Handler) seen(ctx context.Context, conn *pgx.Conn, key string) (bool, error) { ... }\n"),
        ("CODEOWNERS", "/internal/db/ @acme/platform-db\n/internal/payments/ @acme/payments\n"),
        ("internal/payments/metrics.go", "var chargeLatency = prometheus.NewHistogram(prometheus.HistogramOpts{Name: \"charge_latency_seconds\"})\n"),
    ], "Reading the remaining pool users and the ADR on Postgres access.") + [
        ("run", ("go vet ./...", "# payments/cmd/reconcile\ncmd/reconcile/main.go:15:12: pool.Close undefined (type *db.Pool has no field or method Close)", 1)),
        ("grep", ("pool.Get(", "internal/", "internal/payments/handler.go:12\ninternal/payments/refund.go:9\ninternal/payments/webhook.go:7\ninternal/jobs/reconcile.go:3")),
        ("run", ("golangci-lint run ./internal/db/...", "internal/db/pool.go:41:2: SA2002: the goroutine calls T.Fatalf, which must be called in the same goroutine as the test (staticcheck)", 1)),
        ("run", ("git log --oneline origin/feat/db-pool -3", "4be21c7 db: add connection pool\n1d0e9a3 payments: pass pool to handler\n77b2f10 wip", 0)),
        ("run", ("gh pr checks 482", "build\tpass\t1m12s\ntest\tpass\t2m03s", 0)),
        ("say", ("CI is green only because it neither runs -race nor builds cmd/reconcile; REVIEW.md already says so.",)),
        ("run", ("go test ./internal/payments/... -count=1", "ok  \tpayments/internal/payments\t1.204s", 0)),
        ("run", ("go list -m -versions github.com/jackc/pgx/v5", "github.com/jackc/pgx/v5 v5.0.0 v5.1.0 v5.2.0 v5.3.0 v5.4.0 v5.4.1 v5.4.2 v5.4.3 v5.5.0", 0)),
        ("grep", ("HealthCheckPeriod", "$(go env GOMODCACHE)/github.com/jackc/pgx/v5@v5.4.3/pgxpool", "pgxpool/pool.go:138:\tHealthCheckPeriod time.Duration\npgxpool/pool.go:301:\tdefaultHealthCheckPeriod = time.Minute")),
        ("run", ("gh pr view 482 --json author,title,isDraft", "{\"author\":{\"login\":\"mkovac\"},\"title\":\"db: connection pooling\",\"isDraft\":true}", 0)),
        ("run", ("git checkout main", "Switched to branch 'main'", 0)),
    ])
    out = []
    for s in (dbg, feat, rev):
        out.extend(s.records(4))
    with open(os.path.join(here, "sessions.jsonl"), "w", encoding="utf-8") as f:
        for r in out:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    for s in (dbg, feat, rev):
        print("%s: %d messages" % (s.sid, len(s.msgs)))


if __name__ == "__main__":
    main()
