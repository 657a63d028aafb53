// The JSON API, as the pages use it. Errors carry the API's
// {"error": {"code", "field", "message"}}.

export class ApiError extends Error {
  constructor(status, body) {
    const e = body && body.error ? body.error : {};
    super(e.message ? (e.field ? e.field + ': ' : '') + e.message : 'HTTP ' + status);
    this.status = status;
    this.code = e.code || 'http_' + status;
    this.field = e.field || '';
  }
}

function url(path, params) {
  const u = new URL(path, window.location.origin);
  for (const [key, value] of Object.entries(params || {})) {
    if (value === undefined || value === null || value === '') continue;
    for (const v of [value].flat()) u.searchParams.append(key, String(v));
  }
  return u;
}

async function parse(response) {
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

export async function get(path, params, signal) {
  return parse(await fetch(url(path, params), {headers: {Accept: 'application/json'}, signal}));
}

export async function post(path, body, token) {
  return parse(await fetch(url(path), {
    method: 'POST',
    headers: {'Content-Type': 'application/json', Accept: 'application/json', Authorization: 'Bearer ' + token},
    body: JSON.stringify(body),
  }));
}
