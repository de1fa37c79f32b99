/* mini_json.c — see mini_json.h. Recursive descent with a depth limit. */
#include "mini_json.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
  const char *s, *p;
  char *err;
  size_t err_cap;
  int failed;
} parser;

static void fail(parser *ps, const char *why) {
  if (!ps->failed)
    snprintf(ps->err, ps->err_cap, "%s at offset %ld", why, (long)(ps->p - ps->s));
  ps->failed = 1;
}

static void skip_ws(parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static void value_clear(tj_value *v) {
  free(v->text);
  for (size_t i = 0; i < v->n; i++) {
    value_clear(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  memset(v, 0, sizeof *v);
}

static char *parse_string_raw(parser *ps) {
  if (*ps->p != '"') return fail(ps, "expected a string"), NULL;
  ps->p++;
  size_t cap = 16, n = 0;
  char *out = malloc(cap);
  if (!out) return fail(ps, "out of memory"), NULL;
  for (;;) {
    unsigned char ch = (unsigned char)*ps->p;
    if (ch == '\0' || ch < 0x20) {
      free(out);
      return fail(ps, "unterminated string or control character"), NULL;
    }
    ps->p++;
    if (ch == '"') break;
    if (ch == '\\') {
      char e = *ps->p++;
      switch (e) {
      case '"': ch = '"'; break;
      case '\\': ch = '\\'; break;
      case '/': ch = '/'; break;
      case 'b': ch = '\b'; break;
      case 'f': ch = '\f'; break;
      case 'n': ch = '\n'; break;
      case 'r': ch = '\r'; break;
      case 't': ch = '\t'; break;
      case 'u':
        for (int i = 0; i < 4; i++)
          if (!isxdigit((unsigned char)ps->p[i])) {
            free(out);
            return fail(ps, "bad \\u escape"), NULL;
          }
        ps->p += 4;
        ch = '?';
        break;
      default:
        free(out);
        return fail(ps, "bad escape"), NULL;
      }
    }
    if (n + 2 > cap) {
      char *grown = realloc(out, cap *= 2);
      if (!grown) {
        free(out);
        return fail(ps, "out of memory"), NULL;
      }
      out = grown;
    }
    out[n++] = (char)ch;
  }
  out[n] = '\0';
  return out;
}

static int parse_value(parser *ps, tj_value *v, int depth);

static int push_item(parser *ps, tj_value *v, int with_key) {
  tj_value *items = realloc(v->items, (v->n + 1) * sizeof *items);
  if (!items) return fail(ps, "out of memory"), -1;
  v->items = items;
  memset(&v->items[v->n], 0, sizeof *items);
  if (with_key) {
    char **keys = realloc(v->keys, (v->n + 1) * sizeof *keys);
    if (!keys) return fail(ps, "out of memory"), -1;
    v->keys = keys;
    v->keys[v->n] = NULL;
  }
  v->n++;
  return 0;
}

static int parse_container(parser *ps, tj_value *v, int depth, int object) {
  char close = object ? '}' : ']';
  v->type = object ? TJ_OBJECT : TJ_ARRAY;
  ps->p++;
  skip_ws(ps);
  if (*ps->p == close) {
    ps->p++;
    return 0;
  }
  for (;;) {
    skip_ws(ps);
    if (push_item(ps, v, object)) return -1;
    if (object) {
      v->keys[v->n - 1] = parse_string_raw(ps);
      if (!v->keys[v->n - 1]) return -1;
      skip_ws(ps);
      if (*ps->p != ':') return fail(ps, "expected ':'"), -1;
      ps->p++;
    }
    if (parse_value(ps, &v->items[v->n - 1], depth + 1)) return -1;
    skip_ws(ps);
    if (*ps->p == ',') {
      ps->p++;
      continue;
    }
    if (*ps->p == close) {
      ps->p++;
      return 0;
    }
    return fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'"), -1;
  }
}

static int parse_number(parser *ps, tj_value *v) {
  const char *start = ps->p, *q = ps->p;
  if (*q == '-') q++;
  if (*q == '0')
    q++;
  else if (*q >= '1' && *q <= '9')
    while (isdigit((unsigned char)*q)) q++;
  else
    return fail(ps, "bad number"), -1;
  if (*q == '.') {
    q++;
    if (!isdigit((unsigned char)*q)) return fail(ps, "bad fraction"), -1;
    while (isdigit((unsigned char)*q)) q++;
  }
  if (*q == 'e' || *q == 'E') {
    q++;
    if (*q == '+' || *q == '-') q++;
    if (!isdigit((unsigned char)*q)) return fail(ps, "bad exponent"), -1;
    while (isdigit((unsigned char)*q)) q++;
  }
  v->type = TJ_NUMBER;
  v->text = malloc((size_t)(q - start) + 1);
  if (!v->text) return fail(ps, "out of memory"), -1;
  memcpy(v->text, start, (size_t)(q - start));
  v->text[q - start] = '\0';
  ps->p = q;
  return 0;
}

static int parse_value(parser *ps, tj_value *v, int depth) {
  if (depth > 64) return fail(ps, "nested too deeply"), -1;
  skip_ws(ps);
  switch (*ps->p) {
  case '{': return parse_container(ps, v, depth, 1);
  case '[': return parse_container(ps, v, depth, 0);
  case '"':
    v->type = TJ_STRING;
    v->text = parse_string_raw(ps);
    return v->text ? 0 : -1;
  case 't':
    if (strncmp(ps->p, "true", 4)) break;
    ps->p += 4;
    v->type = TJ_BOOL;
    v->boolean = 1;
    return 0;
  case 'f':
    if (strncmp(ps->p, "false", 5)) break;
    ps->p += 5;
    v->type = TJ_BOOL;
    return 0;
  case 'n':
    if (strncmp(ps->p, "null", 4)) break;
    ps->p += 4;
    v->type = TJ_NULL;
    return 0;
  default:
    if (*ps->p == '-' || isdigit((unsigned char)*ps->p)) return parse_number(ps, v);
  }
  return fail(ps, "unexpected character"), -1;
}

tj_value *tj_parse(const char *text, char *err, size_t err_cap) {
  parser ps = {text, text, err, err_cap, 0};
  tj_value *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  if (parse_value(&ps, v, 0) == 0) {
    skip_ws(&ps);
    if (*ps.p != '\0') fail(&ps, "trailing characters");
  }
  if (ps.failed) {
    tj_free(v);
    return NULL;
  }
  return v;
}

void tj_free(tj_value *v) {
  if (!v) return;
  value_clear(v);
  free(v);
}

const tj_value *tj_get(const tj_value *obj, const char *key) {
  if (!obj || obj->type != TJ_OBJECT) return NULL;
  for (size_t i = 0; i < obj->n; i++)
    if (!strcmp(obj->keys[i], key)) return &obj->items[i];
  return NULL;
}

const tj_value *tj_at(const tj_value *arr, size_t i) {
  if (!arr || arr->type != TJ_ARRAY || i >= arr->n) return NULL;
  return &arr->items[i];
}

size_t tj_len(const tj_value *v) { return v && v->type == TJ_ARRAY ? v->n : (size_t)-1; }

double tj_num(const tj_value *v) { return v && v->type == TJ_NUMBER ? strtod(v->text, NULL) : NAN; }
