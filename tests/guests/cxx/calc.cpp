// calc.cpp - a C++ reactor component built with Emscripten's
// -fwasm-exceptions: every error inside is a C++ exception (legacy
// exception-handling instructions: try, catch_all, rethrow, delegate),
// caught at the export and returned as a WIT result.  World: calc.wit.
// Hand-written canonical-ABI glue (no wit-bindgen for C++ on Debian or
// npm).  Built by tests/guests/build.sh cxx:
//   em++ -O2 -sSTANDALONE_WASM --no-entry -fwasm-exceptions calc.cpp \
//     -o calc-core.wasm
// then jco's componentEmbed/componentNew (tests/guests/componentize.mjs).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#define EXPORT(name) extern "C" __attribute__((export_name(name)))

EXPORT("cabi_realloc")
void *cabi_realloc(void *old, size_t old_size, size_t align, size_t new_size)
{
	(void)old_size;
	(void)align;
	return std::realloc(old, new_size ? new_size : 1);
}

struct bad_token : std::invalid_argument {
	explicit bad_token(const std::string &t)
	    : std::invalid_argument("bad number '" + t + "'")
	{
	}
};

static int64_t parse_one(const std::string &t)
{
	size_t used = 0;
	long long v;

	try {
		v = std::stoll(t, &used);
	} catch (const std::out_of_range &) {
		throw std::overflow_error("'" + t + "' is out of range");
	} catch (const std::invalid_argument &) {
		throw bad_token(t);
	}
	if (used != t.size())
		throw bad_token(t);
	return v;
}

static int64_t parse_sum(const std::string &text)
{
	int64_t sum = 0;
	size_t start = 0;

	while (start <= text.size()) {
		size_t comma = text.find(',', start);
		if (comma == std::string::npos)
			comma = text.size();
		int64_t v = parse_one(text.substr(start, comma - start));
		if (__builtin_add_overflow(sum, v, &sum))
			throw std::overflow_error("the sum overflows");
		start = comma + 1;
	}
	return sum;
}

// result<T, string> in the return area: tag, then the value or the
// string's pointer and length (8-byte aligned payload).
alignas(8) static uint32_t ret_area[4];

static uint32_t *err_string(const std::string &msg)
{
	char *p = static_cast<char *>(std::malloc(msg.size() + 1));
	std::memcpy(p, msg.data(), msg.size());
	ret_area[0] = 1;
	ret_area[2] = (uint32_t)(uintptr_t)p;
	ret_area[3] = (uint32_t)msg.size();
	return ret_area;
}

EXPORT("hostel:cxx/api@0.1.0#parse-sum")
uint32_t *cxx_parse_sum(char *ptr, size_t len)
{
	std::string text(ptr, len);

	std::free(ptr);
	try {
		int64_t v = parse_sum(text);
		ret_area[0] = 0;
		std::memcpy(&ret_area[2], &v, sizeof v);
		return ret_area;
	} catch (const std::exception &e) {
		return err_string(e.what());
	}
}

EXPORT("cabi_post_hostel:cxx/api@0.1.0#parse-sum")
void cxx_parse_sum_post(uint32_t *ret)
{
	if (ret[0] == 1)
		std::free((void *)(uintptr_t)ret[2]);
}

static int32_t divide(int32_t a, int32_t b)
{
	if (b == 0)
		throw std::domain_error("division by zero");
	if (a == std::numeric_limits<int32_t>::min() && b == -1)
		throw std::overflow_error("the quotient overflows");
	return a / b;
}

// result<s32, string>'s err: the payload is 4-byte aligned
static uint32_t *err_string4(const std::string &msg)
{
	char *p = static_cast<char *>(std::malloc(msg.size() + 1));
	std::memcpy(p, msg.data(), msg.size());
	ret_area[0] = 1;
	ret_area[1] = (uint32_t)(uintptr_t)p;
	ret_area[2] = (uint32_t)msg.size();
	return ret_area;
}

EXPORT("hostel:cxx/api@0.1.0#checked-div")
uint32_t *cxx_checked_div(int32_t a, int32_t b)
{
	try {
		int32_t q = divide(a, b);
		ret_area[0] = 0;
		ret_area[1] = (uint32_t)q;
		return ret_area;
	} catch (const std::domain_error &e) {
		return err_string4(std::string("domain: ") + e.what());
	} catch (const std::exception &e) {
		return err_string4(std::string("other: ") + e.what());
	}
}

EXPORT("cabi_post_hostel:cxx/api@0.1.0#checked-div")
void cxx_checked_div_post(uint32_t *ret)
{
	if (ret[0] == 1)
		std::free((void *)(uintptr_t)ret[1]);
}

static int guards;

struct guard {
	guard() { guards++; }
	~guard() { guards--; }
};

struct depth_reached {
	uint32_t n;
};

static void down(uint32_t left, uint32_t n)
{
	guard g;

	if (left == 0)
		throw depth_reached{n};
	down(left - 1, n);
}

EXPORT("hostel:cxx/api@0.1.0#unwind")
uint32_t cxx_unwind(uint32_t n)
{
	try {
		down(n, n);
	} catch (const depth_reached &d) {
		return d.n + (uint32_t)guards;
	}
	return 0;
}
