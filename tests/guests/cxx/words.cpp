// words.cpp - a C++ reactor component built with Debian's clang-19 and
// libc++ for wasm32 (libc++-19-dev-wasm32; its libc++abi has no
// exception support, hence -fno-exceptions): std::string, std::map,
// std::vector and std::sort behind hand-written canonical-ABI glue.
// World: words.wit.  Built by tests/guests/build.sh cxx:
//   clang++-19 --target=wasm32-wasi --sysroot=/usr -O2 -fno-exceptions \
//     -mexec-model=reactor -Wl,--strip-all words.cpp -o words-core.wasm
// then tests/guests/componentize.mjs with the preview1 reactor adapter.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#define EXPORT(name) extern "C" __attribute__((export_name(name)))

EXPORT("cabi_realloc")
void *cabi_realloc(void *old, size_t old_size, size_t align, size_t new_size)
{
	(void)old_size;
	(void)align;
	return std::realloc(old, new_size ? new_size : 1);
}

static std::vector<std::string> split(const std::string &text)
{
	std::vector<std::string> out;
	std::string cur;

	for (unsigned char ch : text) {
		if (std::isspace(ch)) {
			if (!cur.empty())
				out.push_back(cur);
			cur.clear();
		} else {
			cur += (char)ch;
		}
	}
	if (!cur.empty())
		out.push_back(cur);
	return out;
}

// An argument's bytes are the callee's to free; jco 1.35 hands an empty
// string a pointer cabi_realloc never gave (definitions.py's
// store_string calls realloc for 0 bytes too), so those are not freed.
static void free_arg(char *ptr, size_t len)
{
	if (len > 0)
		std::free(ptr);
}

static char *copy_out(const std::string &s)
{
	char *p = static_cast<char *>(std::malloc(s.size() ? s.size() : 1));
	std::memcpy(p, s.data(), s.size());
	return p;
}

alignas(8) static uint32_t ret_area[2];

EXPORT("hostel:cxxwords/api@0.1.0#top-words")
uint32_t *top_words(char *ptr, size_t len, uint32_t n)
{
	std::map<std::string, uint32_t> counts;

	for (std::string w : split(std::string(ptr, len))) {
		std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) {
			return (char)std::tolower(c);
		});
		counts[w]++;
	}
	free_arg(ptr, len);
	std::vector<std::pair<std::string, uint32_t>> v(counts.begin(),
							  counts.end());
	std::stable_sort(v.begin(), v.end(), [](const auto &a, const auto &b) {
		return a.second > b.second;
	});
	if (v.size() > n)
		v.resize(n);
	uint32_t *list =
		static_cast<uint32_t *>(std::malloc(v.size() * 8 + 8));
	for (size_t i = 0; i < v.size(); i++) {
		list[2 * i] = (uint32_t)(uintptr_t)copy_out(v[i].first);
		list[2 * i + 1] = (uint32_t)v[i].first.size();
	}
	ret_area[0] = (uint32_t)(uintptr_t)list;
	ret_area[1] = (uint32_t)v.size();
	return ret_area;
}

EXPORT("cabi_post_hostel:cxxwords/api@0.1.0#top-words")
void top_words_post(uint32_t *ret)
{
	uint32_t *list = (uint32_t *)(uintptr_t)ret[0];

	for (uint32_t i = 0; i < ret[1]; i++)
		std::free((void *)(uintptr_t)list[2 * i]);
	std::free(list);
}

EXPORT("hostel:cxxwords/api@0.1.0#reverse-words")
uint32_t *reverse_words(char *ptr, size_t len)
{
	std::vector<std::string> w = split(std::string(ptr, len));
	std::string out;

	free_arg(ptr, len);
	std::reverse(w.begin(), w.end());
	for (const auto &s : w)
		out += (out.empty() ? "" : " ") + s;
	ret_area[0] = (uint32_t)(uintptr_t)copy_out(out);
	ret_area[1] = (uint32_t)out.size();
	return ret_area;
}

EXPORT("cabi_post_hostel:cxxwords/api@0.1.0#reverse-words")
void reverse_words_post(uint32_t *ret)
{
	std::free((void *)(uintptr_t)ret[0]);
}
