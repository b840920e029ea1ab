/* clang.h: libclang for the generator, linked or loaded.
 *
 * A source build links callguard-gen against the system's libclang (Debian's libclang-14). The
 * Python package's callguard-gen (CG_GEN_DLOPEN, CALLGUARD_GENERATOR_DLOPEN in CMake) is built
 * without one, for any x86-64 Linux: it loads a libclang at start (gen_clang_load), PyPI's
 * `libclang` beside the package first, and every clang_* name below becomes a call through the
 * table it filled. libclang's C API is stable, so any libclang from 14 on serves. A clang_*
 * function the generator starts to use is added to CG_CLANG_FUNCTIONS, or the package's build
 * fails to link. */
#ifndef CG_GEN_CLANG_H
#define CG_GEN_CLANG_H

#include <clang-c/Index.h>

/* 0 when libclang is usable; else -1, having said on stderr what was tried and how to get one. */
int gen_clang_load(void);

/* The folder of clang's builtin headers (<stddef.h>, <stdarg.h>, ...) the API's header is read
 * with, or NULL: CALLGUARD_CLANG_RESOURCE_INCLUDE if set; else the one the generator was built
 * with (a source build), or the package's copy (share/callguard/clang/include). */
const char *gen_clang_resource_include(void);

#ifdef CG_GEN_DLOPEN
/* clang-format off */
#define CG_CLANG_FUNCTIONS(X)                                                                                         \
    X(Cursor_getArgument) X(Cursor_getNumArguments) X(Cursor_getStorageClass) X(Cursor_isMacroFunctionLike)          \
    X(Cursor_isNull) X(File_isEqual) X(Type_getModifiedType) X(Type_getNamedType) X(Type_getSizeOf)                 \
    X(createIndex) X(disposeDiagnostic) X(disposeIndex) X(disposeString) X(disposeTokens)                           \
    X(disposeTranslationUnit) X(equalTypes) X(getArgType) X(getArrayElementType) X(getArraySize) X(getCString)      \
    X(getCanonicalType) X(getCursorExtent) X(getCursorKind) X(getCursorLocation) X(getCursorResultType)             \
    X(getCursorSpelling) X(getCursorType) X(getDiagnostic) X(getDiagnosticLocation) X(getDiagnosticSeverity)        \
    X(getDiagnosticSpelling) X(getEnumConstantDeclValue) X(getEnumDeclIntegerType) X(getFile) X(getFileName)        \
    X(getFileContents)                                                                                              \
    X(getInclusions) X(getNullCursor) X(getNumArgTypes) X(getNumDiagnostics) X(getPointeeType) X(getResultType)     \
    X(getSpellingLocation) X(getTokenKind) X(getTokenSpelling) X(getTranslationUnitCursor) X(getTypeDeclaration)    \
    X(getTypeSpelling) X(getTypedefDeclUnderlyingType) X(isConstQualifiedType) X(isFunctionTypeVariadic)            \
    X(isRestrictQualifiedType) X(isVolatileQualifiedType) X(parseTranslationUnit2) X(tokenize) X(visitChildren)
/* clang-format on */

#define CG_CLANG_FIELD(name) __typeof__(clang_##name) *name;
struct gen_clang_table {
    CG_CLANG_FUNCTIONS(CG_CLANG_FIELD)
};
#undef CG_CLANG_FIELD
extern struct gen_clang_table gen_clang;

/* Each name the generator calls, through the table. */
#define clang_Cursor_getArgument gen_clang.Cursor_getArgument
#define clang_Cursor_getNumArguments gen_clang.Cursor_getNumArguments
#define clang_Cursor_getStorageClass gen_clang.Cursor_getStorageClass
#define clang_Cursor_isMacroFunctionLike gen_clang.Cursor_isMacroFunctionLike
#define clang_Cursor_isNull gen_clang.Cursor_isNull
#define clang_File_isEqual gen_clang.File_isEqual
#define clang_Type_getModifiedType gen_clang.Type_getModifiedType
#define clang_Type_getNamedType gen_clang.Type_getNamedType
#define clang_Type_getSizeOf gen_clang.Type_getSizeOf
#define clang_createIndex gen_clang.createIndex
#define clang_disposeDiagnostic gen_clang.disposeDiagnostic
#define clang_disposeIndex gen_clang.disposeIndex
#define clang_disposeString gen_clang.disposeString
#define clang_disposeTokens gen_clang.disposeTokens
#define clang_disposeTranslationUnit gen_clang.disposeTranslationUnit
#define clang_equalTypes gen_clang.equalTypes
#define clang_getArgType gen_clang.getArgType
#define clang_getArrayElementType gen_clang.getArrayElementType
#define clang_getArraySize gen_clang.getArraySize
#define clang_getCString gen_clang.getCString
#define clang_getCanonicalType gen_clang.getCanonicalType
#define clang_getCursorExtent gen_clang.getCursorExtent
#define clang_getCursorKind gen_clang.getCursorKind
#define clang_getCursorLocation gen_clang.getCursorLocation
#define clang_getCursorResultType gen_clang.getCursorResultType
#define clang_getCursorSpelling gen_clang.getCursorSpelling
#define clang_getCursorType gen_clang.getCursorType
#define clang_getDiagnostic gen_clang.getDiagnostic
#define clang_getDiagnosticLocation gen_clang.getDiagnosticLocation
#define clang_getDiagnosticSeverity gen_clang.getDiagnosticSeverity
#define clang_getDiagnosticSpelling gen_clang.getDiagnosticSpelling
#define clang_getEnumConstantDeclValue gen_clang.getEnumConstantDeclValue
#define clang_getEnumDeclIntegerType gen_clang.getEnumDeclIntegerType
#define clang_getFile gen_clang.getFile
#define clang_getFileContents gen_clang.getFileContents
#define clang_getFileName gen_clang.getFileName
#define clang_getInclusions gen_clang.getInclusions
#define clang_getNullCursor gen_clang.getNullCursor
#define clang_getNumArgTypes gen_clang.getNumArgTypes
#define clang_getNumDiagnostics gen_clang.getNumDiagnostics
#define clang_getPointeeType gen_clang.getPointeeType
#define clang_getResultType gen_clang.getResultType
#define clang_getSpellingLocation gen_clang.getSpellingLocation
#define clang_getTokenKind gen_clang.getTokenKind
#define clang_getTokenSpelling gen_clang.getTokenSpelling
#define clang_getTranslationUnitCursor gen_clang.getTranslationUnitCursor
#define clang_getTypeDeclaration gen_clang.getTypeDeclaration
#define clang_getTypeSpelling gen_clang.getTypeSpelling
#define clang_getTypedefDeclUnderlyingType gen_clang.getTypedefDeclUnderlyingType
#define clang_isConstQualifiedType gen_clang.isConstQualifiedType
#define clang_isFunctionTypeVariadic gen_clang.isFunctionTypeVariadic
#define clang_isRestrictQualifiedType gen_clang.isRestrictQualifiedType
#define clang_isVolatileQualifiedType gen_clang.isVolatileQualifiedType
#define clang_parseTranslationUnit2 gen_clang.parseTranslationUnit2
#define clang_tokenize gen_clang.tokenize
#define clang_visitChildren gen_clang.visitChildren
#endif

#endif
