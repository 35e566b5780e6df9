// The JSON API client: every failure becomes an Error carrying the server's message.

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

async function parse(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    throw new ApiError(
      `HTTP ${response.status}: the server did not answer with JSON`,
      response.status,
    );
  }
  if (!response.ok) {
    const message = body && typeof body.error === "string" ? body.error : `HTTP ${response.status}`;
    throw new ApiError(message, response.status);
  }
  return body;
}

function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value !== null && value !== undefined && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

export async function getJSON(path, params) {
  const response = await fetch(path + query(params), { headers: { Accept: "application/json" } });
  return parse(response);
}

export async function postJSON(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(body),
  });
  return parse(response);
}

/** A file's bytes as they are (`application/octet-stream`), its name and options in the query. */
export async function postFile(path, file, params) {
  const response = await fetch(path + query(params), {
    method: "POST",
    headers: { "Content-Type": "application/octet-stream", Accept: "application/json" },
    body: file,
  });
  return parse(response);
}
