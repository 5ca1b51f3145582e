"""A correct solution and a typical flawed first draft for every course task.

Used only by the tests: the correct one must pass the hidden tests, the flawed one must
fail at least one, so the hidden tests are known to be both passable and able to fail.
"""

CORRECT = {
    "factorial": '''
def calculate_factorial(n: int) -> int:
    """Return n! for a non-negative integer n."""
    if n < 0:
        raise ValueError("n must be non-negative")
    result = 1
    for i in range(2, n + 1):
        result *= i
    return result
''',
    "merge_sorted": """
def merge_sorted_lists(list1, list2):
    i = j = 0
    out = []
    while i < len(list1) and j < len(list2):
        if list1[i] <= list2[j]:
            out.append(list1[i]); i += 1
        else:
            out.append(list2[j]); j += 1
    return out + list1[i:] + list2[j:]
""",
    "fibonacci": """
def fibonacci(n):
    if n < 0:
        raise ValueError("negative")
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
""",
    "palindrome": """
def is_palindrome(text):
    chars = [c.lower() for c in text if c.isalnum()]
    return chars == chars[::-1]
""",
    "second_largest": """
def second_largest(numbers):
    distinct = set(numbers)
    if len(distinct) < 2:
        raise ValueError("need two distinct values")
    distinct.remove(max(distinct))
    return max(distinct)
""",
    "flatten": """
def flatten(nested):
    out = []
    for item in nested:
        if isinstance(item, list):
            out.extend(flatten(item))
        else:
            out.append(item)
    return out
""",
    "word_count": """
import re
def word_count(text):
    counts = {}
    for w in re.findall(r"[a-z0-9]+(?:'[a-z0-9]+)*", text.lower()):
        counts[w] = counts.get(w, 0) + 1
    return counts
""",
    "binary_search": """
def binary_search(items, target):
    lo, hi = 0, len(items) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if items[mid] == target:
            return mid
        if items[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1
""",
    "chunk_list": """
def chunk_list(items, size):
    if size <= 0:
        raise ValueError("size must be positive")
    return [items[i:i + size] for i in range(0, len(items), size)]
""",
    "roman_to_int": """
def roman_to_int(numeral):
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    s = numeral.upper()
    if not s or any(c not in values for c in s):
        raise ValueError("not a roman numeral")
    total = 0
    for i, c in enumerate(s):
        v = values[c]
        total += -v if i + 1 < len(s) and values[s[i + 1]] > v else v
    return total
""",
    "running_average": """
def running_average(numbers):
    out, total = [], 0
    for i, x in enumerate(numbers, 1):
        total += x
        out.append(total / i)
    return out
""",
    "rotate_list": """
def rotate_list(items, k):
    if not items:
        return []
    k %= len(items)
    return items[-k:] + items[:-k] if k else list(items)
""",
    "median": """
def median(numbers):
    if not numbers:
        raise ValueError("empty")
    s = sorted(numbers)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
""",
    "unique": """
def unique_in_order(items):
    seen, out = set(), []
    for x in items:
        if x not in seen:
            seen.add(x); out.append(x)
    return out
""",
    "caesar": """
def caesar_cipher(text, shift):
    out = []
    for c in text:
        if "a" <= c <= "z":
            out.append(chr((ord(c) - 97 + shift) % 26 + 97))
        elif "A" <= c <= "Z":
            out.append(chr((ord(c) - 65 + shift) % 26 + 65))
        else:
            out.append(c)
    return "".join(out)
""",
    "transpose": """
def transpose(matrix):
    if not matrix:
        return []
    if len({len(r) for r in matrix}) != 1:
        raise ValueError("ragged")
    return [list(col) for col in zip(*matrix)]
""",
    "parse_duration": """
import re
def parse_duration(text):
    m = re.fullmatch(r"\\s*(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?\\s*", text)
    if not m or not any(m.groups()):
        raise ValueError(f"bad duration: {text!r}")
    h, mi, s = (int(g) if g else 0 for g in m.groups())
    return h * 3600 + mi * 60 + s
""",
    "count_vowels": """
def count_vowels(text):
    return sum(1 for c in text.lower() if c in "aeiou")
""",
}

FLAWED = {
    "factorial": "def calculate_factorial(n):\n    return 1 if n <= 1 else n * calculate_factorial(n - 1)\n",
    "merge_sorted": "def merge_sorted_lists(list1, list2):\n    return sorted(list1 + list2)[:-1] if list1 else list2\n",
    "fibonacci": "def fibonacci(n):\n    return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)\n",
    "palindrome": "def is_palindrome(text):\n    return text == text[::-1]\n",
    "second_largest": "def second_largest(numbers):\n    numbers.sort()\n    return numbers[-2]\n",
    "flatten": "def flatten(nested):\n    return [x for sub in nested for x in (sub if isinstance(sub, list) else [sub])]\n",
    "word_count": "def word_count(text):\n    d = {}\n    for w in text.split():\n        d[w] = d.get(w, 0) + 1\n    return d\n",
    "binary_search": "def binary_search(items, target):\n    lo, hi = 0, len(items) - 1\n    while lo < hi:\n        mid = (lo + hi) // 2\n        if items[mid] == target:\n            return mid\n        if items[mid] < target:\n            lo = mid + 1\n        else:\n            hi = mid - 1\n    return -1\n",
    "chunk_list": "def chunk_list(items, size):\n    return [items[i:i + size] for i in range(0, len(items), size)]\n",
    "roman_to_int": "def roman_to_int(numeral):\n    v = {'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000}\n    return sum(v[c] for c in numeral)\n",
    "running_average": "def running_average(numbers):\n    return [sum(numbers[:i + 1]) // (i + 1) for i in range(len(numbers))]\n",
    "rotate_list": "def rotate_list(items, k):\n    return items[-k:] + items[:-k]\n",
    "median": "def median(numbers):\n    numbers.sort()\n    return numbers[len(numbers) // 2]\n",
    "unique": "def unique_in_order(items):\n    return list(set(items))\n",
    "caesar": "def caesar_cipher(text, shift):\n    return ''.join(chr(ord(c) + shift) for c in text)\n",
    "transpose": "def transpose(matrix):\n    return [list(c) for c in zip(*matrix)]\n",
    "parse_duration": "def parse_duration(text):\n    return int(text[:-1]) * {'h': 3600, 'm': 60, 's': 1}[text[-1]]\n",
    "count_vowels": "def count_vowels(text):\n    return sum(c in 'aeiouy' for c in text)\n",
}
