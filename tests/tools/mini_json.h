/* mini_json.h — a small strict JSON parser for the tools' tests: the whole
 * text must be one valid JSON value (RFC 8259 grammar: no NaN, no trailing
 * commas, no leading zeros). Numbers keep their text so a test can strtof()
 * them and compare float32 bits. */
#ifndef TC_MINI_JSON_H
#define TC_MINI_JSON_H

#include <stddef.h>

enum { TJ_NULL, TJ_BOOL, TJ_NUMBER, TJ_STRING, TJ_ARRAY, TJ_OBJECT };

typedef struct tj_value {
  int type;
  int boolean;            /* TJ_BOOL */
  char *text;             /* TJ_NUMBER: its text; TJ_STRING: decoded (\u as '?') */
  size_t n;               /* items of an array or object */
  struct tj_value *items; /* (n) */
  char **keys;            /* (n) for objects */
} tj_value;

/* Parses text; returns NULL and writes a reason with its offset to err. */
tj_value *tj_parse(const char *text, char *err, size_t err_cap);
void tj_free(tj_value *v);
/* Member `key` of an object, or NULL. */
const tj_value *tj_get(const tj_value *obj, const char *key);
/* Item i of an array (NULL when out of range or not an array). */
const tj_value *tj_at(const tj_value *arr, size_t i);
/* Length of an array, or (size_t)-1 when v is not an array. */
size_t tj_len(const tj_value *v);
/* Number as double; NaN when v is not a number. */
double tj_num(const tj_value *v);

#endif /* TC_MINI_JSON_H */
