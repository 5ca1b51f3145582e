"""The course's own tasks. Tests are hidden from the producer: only `statement` and
`requirements` go into a prompt. Each test statement is one step the sandbox reports on.
`checks` feeds the static checks in reflect.tasks.checks."""

COURSE_TASKS = [
    {
        "id": "factorial",
        "entry_point": "calculate_factorial",
        "difficulty": "easy",
        "statement": "Write a function calculate_factorial(n) that returns n! for a non-negative integer n.",
        "requirements": [
            "accepts an integer n and returns n! as an integer",
            "has a docstring",
            "returns 1 for n = 0",
            "raises ValueError for a negative n",
        ],
        "checks": {
            "name": "calculate_factorial",
            "arity": 1,
            "docstring": True,
            "raises": ["ValueError"],
        },
        "tests": """
assert calculate_factorial(0) == 1
assert calculate_factorial(1) == 1
assert calculate_factorial(5) == 120
assert calculate_factorial(10) == 3628800
assert calculate_factorial(25) == 15511210043330985984000000
with raises(ValueError):
    calculate_factorial(-1)
with raises(ValueError):
    calculate_factorial(-10)
assert calculate_factorial.__doc__ is not None and calculate_factorial.__doc__.strip() != ""
""",
    },
    {
        "id": "merge_sorted",
        "entry_point": "merge_sorted_lists",
        "difficulty": "easy",
        "statement": "Write a function merge_sorted_lists(list1, list2) that merges two lists, each already "
        "sorted in ascending order, into one new sorted list.",
        "requirements": [
            "must not use sorted() or list.sort(): merge the two lists in one pass",
            "handles empty lists (either or both)",
            "keeps duplicates",
            "does not modify the input lists",
        ],
        "checks": {"name": "merge_sorted_lists", "arity": 2, "forbidden": ["sorted", ".sort"]},
        "tests": """
assert merge_sorted_lists([1, 3, 5], [2, 4, 6]) == [1, 2, 3, 4, 5, 6]
assert merge_sorted_lists([], []) == []
assert merge_sorted_lists([], [1, 2]) == [1, 2]
assert merge_sorted_lists([1, 2], []) == [1, 2]
assert merge_sorted_lists([1, 1, 2], [1, 3]) == [1, 1, 1, 2, 3]
assert merge_sorted_lists([-5, 0, 10], [-7, 20]) == [-7, -5, 0, 10, 20]
assert merge_sorted_lists([1, 2, 3], [10, 11]) == [1, 2, 3, 10, 11]
a, b = [1, 4], [2, 3]
merge_sorted_lists(a, b)
assert (a, b) == ([1, 4], [2, 3])
""",
    },
    {
        "id": "fibonacci",
        "entry_point": "fibonacci",
        "difficulty": "easy",
        "statement": "Write a function fibonacci(n) that returns the n-th Fibonacci number, "
        "with fibonacci(0) == 0 and fibonacci(1) == 1.",
        "requirements": [
            "fibonacci(0) is 0 and fibonacci(1) is 1",
            "raises ValueError for a negative n",
            "is fast for n up to 300 (well under a second)",
        ],
        "checks": {"name": "fibonacci", "arity": 1, "raises": ["ValueError"]},
        "tests": """
assert fibonacci(0) == 0
assert fibonacci(1) == 1
assert fibonacci(2) == 1
assert fibonacci(10) == 55
assert fibonacci(50) == 12586269025
assert fibonacci(300) == 222232244629420445529739893461909967206666939096499764990979600
with raises(ValueError):
    fibonacci(-1)
""",
    },
    {
        "id": "palindrome",
        "entry_point": "is_palindrome",
        "difficulty": "easy",
        "statement": "Write a function is_palindrome(text) that tells whether a string reads the same "
        "forwards and backwards.",
        "requirements": [
            "ignores case",
            "ignores everything that is not a letter or a digit (spaces, punctuation)",
            "works for non-ASCII letters too (for example 'Ésé')",
            "the empty string is a palindrome",
        ],
        "checks": {"name": "is_palindrome", "arity": 1},
        "tests": """
assert is_palindrome("racecar") == True
assert is_palindrome("A man, a plan, a canal: Panama") == True
assert is_palindrome("hello") == False
assert is_palindrome("") == True
assert is_palindrome("No 'x' in Nixon") == True
assert is_palindrome("Ésé") == True
assert is_palindrome("12321") == True
assert is_palindrome("ab") == False
""",
    },
    {
        "id": "second_largest",
        "entry_point": "second_largest",
        "difficulty": "medium",
        "statement": "Write a function second_largest(numbers) that returns the second largest distinct "
        "value in a list of numbers.",
        "requirements": [
            "duplicates count once: second_largest([5, 5, 3]) is 3",
            "works with negative numbers",
            "raises ValueError when there are fewer than two distinct values",
            "does not modify the input list",
        ],
        "checks": {"name": "second_largest", "arity": 1, "raises": ["ValueError"]},
        "tests": """
assert second_largest([1, 2, 3, 4]) == 3
assert second_largest([5, 5, 3]) == 3
assert second_largest([-1, -2, -3]) == -2
assert second_largest([10, 10, 10, 9]) == 9
with raises(ValueError):
    second_largest([7, 7])
with raises(ValueError):
    second_largest([])
data = [3, 1, 2]
second_largest(data)
assert data == [3, 1, 2]
""",
    },
    {
        "id": "flatten",
        "entry_point": "flatten",
        "difficulty": "medium",
        "statement": "Write a function flatten(nested) that turns a list of arbitrarily nested lists "
        "into one flat list, keeping the order.",
        "requirements": [
            "any depth of nesting",
            "empty inner lists contribute nothing",
            "strings are items, not lists to split",
        ],
        "checks": {"name": "flatten", "arity": 1},
        "tests": """
assert flatten([1, [2, 3], [4, [5, [6]]]]) == [1, 2, 3, 4, 5, 6]
assert flatten([]) == []
assert flatten([[], [[]], 1]) == [1]
assert flatten(["ab", ["cd"]]) == ["ab", "cd"]
assert flatten([[[[[[[[[[1]]]]]]]]]]) == [1]
""",
    },
    {
        "id": "word_count",
        "entry_point": "word_count",
        "difficulty": "medium",
        "statement": "Write a function word_count(text) that returns a dict mapping each word to the number "
        "of times it occurs.",
        "requirements": [
            "case-insensitive: 'The' and 'the' are the same word (keys are lower case)",
            "punctuation around words is ignored ('end.' counts as 'end')",
            'apostrophes inside words are kept ("don\'t" is one word)',
            "an empty or blank text gives an empty dict",
        ],
        "checks": {"name": "word_count", "arity": 1},
        "tests": """
assert word_count("the cat and the hat") == {"the": 2, "cat": 1, "and": 1, "hat": 1}
assert word_count("") == {}
assert word_count("   ") == {}
assert word_count("Hello, hello! HELLO.") == {"hello": 3}
assert word_count("Don't stop. don't!") == {"don't": 2, "stop": 1}
""",
    },
    {
        "id": "binary_search",
        "entry_point": "binary_search",
        "difficulty": "medium",
        "statement": "Write a function binary_search(items, target) that returns the index of target in the "
        "ascending sorted list items, or -1 if it is absent.",
        "requirements": [
            "runs in O(log n): no linear scan, no list.index",
            "returns -1 for an empty list",
            "finds the first and the last element",
        ],
        "checks": {"name": "binary_search", "arity": 2, "forbidden": [".index"]},
        "tests": """
assert binary_search([1, 3, 5, 7, 9], 7) == 3
assert binary_search([1, 3, 5, 7, 9], 1) == 0
assert binary_search([1, 3, 5, 7, 9], 9) == 4
assert binary_search([1, 3, 5, 7, 9], 4) == -1
assert binary_search([], 1) == -1
assert binary_search([2], 2) == 0
assert binary_search(list(range(0, 2_000_000, 2)), 1_999_998) == 999_999
""",
    },
    {
        "id": "chunk_list",
        "entry_point": "chunk_list",
        "difficulty": "easy",
        "statement": "Write a function chunk_list(items, size) that splits a list into consecutive chunks "
        "of length size (the last chunk may be shorter).",
        "requirements": [
            "returns a list of lists",
            "an empty list gives []",
            "raises ValueError when size is 0 or negative",
        ],
        "checks": {"name": "chunk_list", "arity": 2, "raises": ["ValueError"]},
        "tests": """
assert chunk_list([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]
assert chunk_list([1, 2, 3], 3) == [[1, 2, 3]]
assert chunk_list([1, 2], 5) == [[1, 2]]
assert chunk_list([], 3) == []
with raises(ValueError):
    chunk_list([1, 2], 0)
with raises(ValueError):
    chunk_list([1, 2], -1)
""",
    },
    {
        "id": "roman_to_int",
        "entry_point": "roman_to_int",
        "difficulty": "medium",
        "statement": "Write a function roman_to_int(numeral) that converts a Roman numeral string to an integer.",
        "requirements": [
            "handles subtractive forms (IV, IX, XL, XC, CD, CM)",
            "accepts lower case too",
            "raises ValueError for an empty string or a character that is not a Roman digit",
        ],
        "checks": {"name": "roman_to_int", "arity": 1, "raises": ["ValueError"]},
        "tests": """
assert roman_to_int("III") == 3
assert roman_to_int("IV") == 4
assert roman_to_int("MCMXCIV") == 1994
assert roman_to_int("mmxxiv") == 2024
assert roman_to_int("XLII") == 42
with raises(ValueError):
    roman_to_int("")
with raises(ValueError):
    roman_to_int("XIZ")
""",
    },
    {
        "id": "running_average",
        "entry_point": "running_average",
        "difficulty": "easy",
        "statement": "Write a function running_average(numbers) that returns the list of running means: "
        "element i is the mean of numbers[0..i].",
        "requirements": ["returns floats", "an empty list gives []", "runs in O(n)"],
        "checks": {"name": "running_average", "arity": 1},
        "tests": """
assert running_average([2, 4, 6]) == [2.0, 3.0, 4.0]
assert running_average([]) == []
assert running_average([5]) == [5.0]
assert running_average([-1, 1]) == [-1.0, 0.0]
assert len(running_average(list(range(200_000)))) == 200_000
""",
    },
    {
        "id": "rotate_list",
        "entry_point": "rotate_list",
        "difficulty": "medium",
        "statement": "Write a function rotate_list(items, k) that returns a new list rotated to the right "
        "by k positions.",
        "requirements": [
            "k larger than the length wraps around",
            "a negative k rotates to the left",
            "an empty list gives [] for any k",
            "does not modify the input list",
        ],
        "checks": {"name": "rotate_list", "arity": 2},
        "tests": """
assert rotate_list([1, 2, 3, 4, 5], 2) == [4, 5, 1, 2, 3]
assert rotate_list([1, 2, 3], 0) == [1, 2, 3]
assert rotate_list([1, 2, 3], 4) == [3, 1, 2]
assert rotate_list([1, 2, 3, 4], -1) == [2, 3, 4, 1]
assert rotate_list([], 3) == []
data = [1, 2, 3]
rotate_list(data, 1)
assert data == [1, 2, 3]
""",
    },
    {
        "id": "median",
        "entry_point": "median",
        "difficulty": "medium",
        "statement": "Write a function median(numbers) that returns the median of a list of numbers.",
        "requirements": [
            "for an even count, the mean of the two middle values",
            "raises ValueError for an empty list",
            "does not modify the input list (do not sort it in place)",
        ],
        "checks": {"name": "median", "arity": 1, "raises": ["ValueError"]},
        "tests": """
assert median([3, 1, 2]) == 2
assert median([4, 1, 3, 2]) == 2.5
assert median([7]) == 7
assert median([-5, -1, -3]) == -3
with raises(ValueError):
    median([])
data = [3, 1, 2]
median(data)
assert data == [3, 1, 2]
""",
    },
    {
        "id": "unique",
        "entry_point": "unique_in_order",
        "difficulty": "easy",
        "statement": "Write a function unique_in_order(items) that removes duplicates from a list, keeping "
        "the first occurrence of each item in its original order.",
        "requirements": [
            "keeps the original order",
            "works for strings, numbers and tuples",
            "an empty list gives []",
        ],
        "checks": {"name": "unique_in_order", "arity": 1},
        "tests": """
assert unique_in_order([3, 1, 3, 2, 1]) == [3, 1, 2]
assert unique_in_order([]) == []
assert unique_in_order(["b", "a", "b"]) == ["b", "a"]
assert unique_in_order([(1, 2), (1, 2), (2, 1)]) == [(1, 2), (2, 1)]
assert unique_in_order(list(range(100_000)) * 2) == list(range(100_000))
""",
    },
    {
        "id": "caesar",
        "entry_point": "caesar_cipher",
        "difficulty": "medium",
        "statement": "Write a function caesar_cipher(text, shift) that shifts each ASCII letter by shift "
        "positions in the alphabet.",
        "requirements": [
            "keeps upper and lower case",
            "wraps around (z + 1 is a)",
            "a negative shift decodes; shifts larger than 26 wrap",
            "leaves every other character (digits, spaces, punctuation, non-ASCII) unchanged",
        ],
        "checks": {"name": "caesar_cipher", "arity": 2},
        "tests": """
assert caesar_cipher("abc", 1) == "bcd"
assert caesar_cipher("xyz", 3) == "abc"
assert caesar_cipher("Hello, World!", 5) == "Mjqqt, Btwqi!"
assert caesar_cipher("bcd", -1) == "abc"
assert caesar_cipher("abc", 27) == "bcd"
assert caesar_cipher("café 123", 1) == "dbgé 123"
""",
    },
    {
        "id": "transpose",
        "entry_point": "transpose",
        "difficulty": "medium",
        "statement": "Write a function transpose(matrix) that returns the transpose of a matrix given as a "
        "list of rows.",
        "requirements": [
            "works for non-square matrices",
            "an empty matrix [] gives []",
            "raises ValueError when the rows have different lengths",
        ],
        "checks": {"name": "transpose", "arity": 1, "raises": ["ValueError"]},
        "tests": """
assert transpose([[1, 2], [3, 4]]) == [[1, 3], [2, 4]]
assert transpose([[1, 2, 3]]) == [[1], [2], [3]]
assert transpose([]) == []
with raises(ValueError):
    transpose([[1, 2], [3]])
""",
    },
    {
        "id": "parse_duration",
        "entry_point": "parse_duration",
        "difficulty": "hard",
        "statement": "Write a function parse_duration(text) that converts a duration such as '1h30m', "
        "'45s' or '2h5s' into a number of seconds.",
        "requirements": [
            "units h, m, s, each at most once, in that order; any may be missing",
            "surrounding whitespace is allowed",
            "raises ValueError for an empty string, unknown units, repeated units or a number with no unit",
        ],
        "checks": {"name": "parse_duration", "arity": 1, "raises": ["ValueError"]},
        "tests": """
assert parse_duration("1h30m") == 5400
assert parse_duration("45s") == 45
assert parse_duration("2h5s") == 7205
assert parse_duration(" 10m ") == 600
for bad in ["", "5", "1x", "1h1h", "m5"]:
    try:
        parse_duration(bad)
    except ValueError:
        pass
    else:
        raise AssertionError(f"parse_duration({bad!r}) should raise ValueError")
""",
    },
    {
        "id": "count_vowels",
        "entry_point": "count_vowels",
        "difficulty": "easy",
        "statement": "Write a function count_vowels(text) that counts the vowels a, e, i, o, u in a string.",
        "requirements": [
            "counts upper and lower case",
            "y is not a vowel",
            "an empty string gives 0",
        ],
        "checks": {"name": "count_vowels", "arity": 1},
        "tests": """
assert count_vowels("hello") == 2
assert count_vowels("AEIOU") == 5
assert count_vowels("rhythm") == 0
assert count_vowels("") == 0
assert count_vowels("Yay") == 1
""",
    },
]
